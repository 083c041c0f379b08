import type { Db } from '@cubicle/db';
import type { JobName, JobPayload } from '@cubicle/contract/jobs';
import type { ViewerEvents } from './viewer/viewer-events.js';

/** Enqueue is the one side effect services have besides the database (a JobQueues in production). */
export interface Enqueue {
  enqueue<N extends JobName>(
    name: N,
    payload: JobPayload<N>,
    options?: {
      jobId?: string;
      delayMs?: number;
      dedupe?: { id: string; ttlMs: number };
      isRetryOfFinished?: boolean;
    },
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

interface PendingNudge {
  promise: Promise<unknown>;
  firstAt: number;
  timer: NodeJS.Timeout;
  send: () => void;
}

// Nudges waiting to be sent, per queue client and pool (see nudgeReconcile).
const pendingNudges = new WeakMap<Enqueue, Map<string, PendingNudge>>();
/** A nudge goes this long after the last one of a burst… */
const NUDGE_QUIET_MS = 20;
/** …and never later than this after the first. */
const NUDGE_MAX_DELAY_MS = 100;

/**
 * nudgeReconcile asks the worker to reconcile a pool soon. Nudges of one process share one
 * enqueue: it is sent 20 ms after the last nudge of a burst, at most 100 ms after the first, so
 * a burst of claims becomes one reconcile that runs after the burst instead of beside it (the
 * reconcile's queries would compete with the claims for the database and CPU; a refill that
 * starts a few ms later is immaterial next to a desktop's start). Across processes BullMQ's
 * deduplication merges them. A lost nudge is harmless: the periodic sweep reconciles every pool.
 */
export function nudgeReconcile(deps: Deps, tenantId: string, poolId: string): Promise<unknown> {
  let byPool = pendingNudges.get(deps.queues);
  if (!byPool) pendingNudges.set(deps.queues, (byPool = new Map()));
  const now = Date.now();
  const pending = byPool.get(poolId);
  if (pending) {
    clearTimeout(pending.timer);
    const delay = Math.min(NUDGE_QUIET_MS, pending.firstAt + NUDGE_MAX_DELAY_MS - now);
    pending.timer = setTimeout(pending.send, Math.max(0, delay));
    return pending.promise;
  }
  let send!: () => void;
  const promise = new Promise<void>((resolve) => (send = resolve)).then(() => {
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
  byPool.set(poolId, { promise, firstAt: now, timer: setTimeout(send, NUDGE_QUIET_MS), send });
  return promise;
}
