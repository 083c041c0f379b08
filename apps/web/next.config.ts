import type { NextConfig } from 'next';

const config: NextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // The workspace root is two levels up; this keeps Next from guessing from lockfiles.
  outputFileTracingRoot: new URL('../..', import.meta.url).pathname,
};

export default config;
