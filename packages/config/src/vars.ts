import { z } from 'zod';

/** Reusable variable shapes so every env.ts spells ports, URLs and levels the same way. */
export const envVars = {
  port: (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback),
  host: (fallback: string) => z.string().min(1).default(fallback),
  databaseUrl: () =>
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgresql:// URL')
      .describe('PostgreSQL connection URL'),
  redisUrl: () =>
    z
      .string()
      // unix:///path, or unix://[user]:password@localhost/path when the server asks for one.
      .regex(/^(rediss?:\/\/|unix:\/\/)/, 'must be a redis://, rediss:// or unix:// URL')
      .describe('Redis connection URL'),
  logLevel: () =>
    z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  nodeEnv: () => z.enum(['development', 'production', 'test']).default('development'),
  /** boolean accepts the usual spellings; anything else is an error rather than silently false. */
  boolean: (fallback: boolean) =>
    z
      .enum(['1', '0', 'true', 'false', 'yes', 'no'])
      .optional()
      .transform((v) => (v === undefined ? fallback : v === '1' || v === 'true' || v === 'yes')),
};
