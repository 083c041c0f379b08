import type { Db } from '@cubicle/db';
import type { JobName, JobPayload } from '@cubicle/contract/jobs';

/** Enqueue is the one side effect services have besides the database (a JobQueues in production). */
export interface Enqueue {
  enqueue<N extends JobName>(
    name: N,
    payload: JobPayload<N>,
    options?: { jobId?: string; delayMs?: number; dedupe?: { id: string; ttlMs: number } },
  ): Promise<unknown>;
}

/** Deps are what every service function receives; tenant scoping is an explicit argument. */
export interface Deps {
  db: Db;
  queues: Enqueue;
  /** Injected so tests can move time; production uses Date.now. */
  now?: () => Date;
}

export const nowOf = (deps: Deps): Date => (deps.now ? deps.now() : new Date());

/**
 * nudgeReconcile asks the worker to reconcile a pool soon: 50 ms after the last nudge of a burst
 * (a burst of claims must not become a burst of reconciles). A lost nudge is harmless: the
 * periodic sweep reconciles every pool anyway.
 */
export function nudgeReconcile(deps: Deps, tenantId: string, poolId: string): Promise<unknown> {
  return deps.queues
    .enqueue(
      'pool.reconcile',
      { tenant_id: tenantId, pool_id: poolId },
      { dedupe: { id: `reconcile-${poolId}`, ttlMs: 50 } },
    )
    .catch(() => undefined);
}
