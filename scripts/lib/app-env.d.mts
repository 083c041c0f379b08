// Types for app-env.mjs, which the TypeScript tests import.
export declare const APP_ENV: Record<'worker' | 'api' | 'web', string[]>;
export declare function appEnv(
  name: 'worker' | 'api' | 'web',
  env: Record<string, string | undefined>,
  options?: { home?: string },
): Record<string, string>;
