import { envVars, loadEnv } from '@cubicle/config';
import { z } from 'zod';

/** ApiEnv is everything the API process reads from its environment, parsed once at start. */
export const ApiEnv = z.object({
  NODE_ENV: envVars.nodeEnv(),
  API_HOST: envVars.host('127.0.0.1'),
  API_PORT: envVars.port(8080),
  DATABASE_URL: envVars.databaseUrl(),
  REDIS_URL: envVars.redisUrl(),
  LOG_LEVEL: envVars.logLevel(),
  /** BullMQ key prefix; must match the worker's. */
  QUEUE_PREFIX: z
    .string()
    .regex(/^[a-z0-9:_-]{1,80}$/)
    .default('cubicle'),
  /** Largest accepted request body; file uploads to sandboxes have their own limit. */
  API_BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(1024 * 1024),
});
export type ApiEnv = z.infer<typeof ApiEnv>;

export function loadApiEnv(source: Record<string, string | undefined> = process.env): ApiEnv {
  return loadEnv('cubicle-api', ApiEnv, source);
}
