import { envVars, loadEnv } from '@cubicle/config';
import { z } from 'zod';

/**
 * WebEnv is everything the web process reads from its environment. It is parsed on first use
 * (instrumentation.ts calls getEnv at server start, so a bad variable stops `next start` there),
 * not at import: `next build` loads these modules without any runtime configuration.
 */
export const WebEnv = z.object({
  NODE_ENV: envVars.nodeEnv(),
  /** Where this server reaches the API (server to server; the browser never calls it with a key). */
  CUBICLE_API_URL: z.url().default('http://127.0.0.1:8080'),
  /** The dashboard's public URL; an https URL makes the session cookie Secure. */
  CUBICLE_WEB_URL: z.url().optional(),
  /** Sessions live in Redis: the API key sealed under CUBICLE_WEB_SESSION_SECRET, keyed by a hash of the cookie. */
  REDIS_URL: envVars.redisUrl(),
  CUBICLE_WEB_REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9:_.-]{1,120}$/)
    .default('cubicle:web:'),
  /** 32 random bytes, base64: the AES-256-GCM key that seals API keys at rest in Redis. */
  CUBICLE_WEB_SESSION_SECRET: z
    .string()
    .refine((v) => Buffer.from(v, 'base64').length === 32, 'must be 32 bytes, base64'),
  CUBICLE_WEB_SESSION_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .max(30 * 86_400)
    .default(12 * 3600),
});
export type WebEnv = z.infer<typeof WebEnv>;

let cached: WebEnv | undefined;

/** getEnv parses the environment once; a bad variable ends the process naming it. */
export function getEnv(): WebEnv {
  cached ??= loadEnv('cubicle-web', WebEnv, process.env);
  return cached;
}
