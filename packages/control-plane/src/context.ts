import type { Db } from '@cubicle/db';
import type { JobName, JobPayload } from '@cubicle/contract/jobs';
import type { ViewerEvents } from './viewer/viewer-events.js';

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
  /** Where claim ends are announced so open viewer streams close (absent: they close on re-check). */
  events?: ViewerEvents;
}

export const nowOf = (deps: Deps): Date => (deps.now ? deps.now() : new Date());

// Nudges waiting to be sent, per queue client and pool (see nudgeReconcile).
const pendingNudges = new WeakMap<Enqueue, Map<string, Promise<unknown>>>();
const NUDGE_COALESCE_MS = 10;

/**
 * nudgeReconcile asks the worker to reconcile a pool soon: 50 ms after the last nudge of a burst
 * (a burst of claims must not become a burst of reconciles). Nudges of one process within 10 ms
 * share one enqueue (a queue call costs more CPU than the claim's own statement); across
 * processes BullMQ's debounce merges them. A lost nudge is harmless: the periodic sweep
 * reconciles every pool anyway.
 */
export function nudgeReconcile(deps: Deps, tenantId: string, poolId: string): Promise<unknown> {
  let byPool = pendingNudges.get(deps.queues);
  if (!byPool) pendingNudges.set(deps.queues, (byPool = new Map()));
  const pending = byPool.get(poolId);
  if (pending) return pending;
  const nudge = new Promise((resolve) => setTimeout(resolve, NUDGE_COALESCE_MS)).then(() => {
    // Leave the map before enqueueing: a claim committed from now on needs a nudge of its own.
    byPool.delete(poolId);
    return deps.queues
      .enqueue(
        'pool.reconcile',
        { tenant_id: tenantId, pool_id: poolId },
        { dedupe: { id: `reconcile-${poolId}`, ttlMs: 50 } },
      )
      .catch(() => undefined);
  });
  byPool.set(poolId, nudge);
  return nudge;
}
