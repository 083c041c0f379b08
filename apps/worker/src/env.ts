import { envVars, loadEnv } from '@cubicle/config';
import { z } from 'zod';

/** WorkerEnv is everything the worker process reads from its environment, parsed once at start. */
export const WorkerEnv = z.object({
  NODE_ENV: envVars.nodeEnv(),
  DATABASE_URL: envVars.databaseUrl(),
  REDIS_URL: envVars.redisUrl(),
  LOG_LEVEL: envVars.logLevel(),
  /** BullMQ key prefix; one Redis can serve several Cubicle installations. */
  QUEUE_PREFIX: z
    .string()
    .regex(/^[a-z0-9:_-]{1,64}$/)
    .default('cubicle'),
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(8),
});
export type WorkerEnv = z.infer<typeof WorkerEnv>;

export function loadWorkerEnv(source: Record<string, string | undefined> = process.env): WorkerEnv {
  return loadEnv('cubicle-worker', WorkerEnv, source);
}
