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
    .regex(/^[a-z0-9:_-]{1,80}$/)
    .default('cubicle'),
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(8),
  /**
   * Sandbox provisions/destroys run at once per worker. Starting desktops is CPU-heavy; on a small
   * machine many at once starve everything else (the reclaim sweep included).
   */
  PROVISION_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(4),
  /** `id:base64key[,id:base64key…]`; the first key seals, all keys open (rotation). */
  CUBICLE_KEYRING: z.string().min(1, 'must hold at least one key (id:base64key)'),
  /** Which backends this worker drives (comma-separated). */
  CUBICLE_BACKENDS: z
    .string()
    .default('local')
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.enum(['local', 'kubernetes', 'kubevirt'])).min(1)),
  RECLAIM_INTERVAL_MS: z.coerce.number().int().min(100).max(60_000).default(500),
  SWEEP_INTERVAL_MS: z.coerce.number().int().min(1000).max(600_000).default(5000),
  /** Prometheus metrics on loopback; 0 picks a free port, unset disables. */
  WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
});
export type WorkerEnv = z.infer<typeof WorkerEnv>;

export function loadWorkerEnv(source: Record<string, string | undefined> = process.env): WorkerEnv {
  return loadEnv('cubicle-worker', WorkerEnv, source);
}
