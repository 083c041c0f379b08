import type { NextConfig } from 'next';
import { fileURLToPath } from 'node:url';

const config: NextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // The workspace root is two levels up; this keeps Next from guessing from lockfiles.
  outputFileTracingRoot: fileURLToPath(new URL('../..', import.meta.url)),
  // Node-side Redis client: loaded from node_modules at run time, not bundled.
  serverExternalPackages: ['ioredis'],
  async headers() {
    return [
      {
        // The dashboard acts with an API key: no other site may frame it (clickjacking). The
        // embed and shared replay pages set their own frame-ancestors from the tenant's origins
        // (proxy.ts).
        source: '/((?!embed/|replay/).*)',
        headers: [
          { key: 'Content-Security-Policy', value: "frame-ancestors 'none'" },
          { key: 'X-Frame-Options', value: 'DENY' },
          { key: 'Referrer-Policy', value: 'same-origin' },
          { key: 'X-Content-Type-Options', value: 'nosniff' },
        ],
      },
    ];
  },
};

export default config;
