import type { JobName, JobPayload } from '@cubicle/contract/jobs';
import { defineDevice, type Deps } from './resources.js';

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

/** The minimum of a Redis connection the API and worker need to publish (ioredis fits). */
export interface Publisher {
  publish(channel: string, message: string): Promise<unknown>;
}

/** The minimum of a subscribed Redis connection (ioredis fits). */
export interface Subscriber {
  subscribe(...channels: string[]): Promise<unknown>;
  on(event: 'message', listener: (channel: string, message: string) => void): unknown;
}

/**
 * RunRedis is the part of a Redis connection runs need (ioredis fits): pub/sub for events and
 * control nudges, and one list per run for its pending input (stdin, cancel) so input sent
 * before the worker holds the run's stream, or while a message is lost, still arrives in order.
 */
export interface RunRedis extends Publisher {
  /** Several commands in one write (the worker's event committer publishes many runs at once). */
  pipeline(): { publish(channel: string, message: string): unknown; exec(): Promise<unknown> };
  rpush(key: string, ...values: string[]): Promise<unknown>;
  expire(key: string, seconds: number): Promise<unknown>;
  lpop(key: string, count: number): Promise<string[] | null>;
  del(...keys: string[]): Promise<unknown>;
}

/** ViewerEvents tells every API process's stream proxy to close streams (Redis pub/sub). */
export interface ViewerEvents {
  publisher: Publisher;
  /** The BullMQ prefix; scopes the channel so test namespaces and deployments stay apart. */
  prefix: string;
}

/** The injectable clock every service reads "now" from (Deps, RunDeps and WorkerDeps carry it). */
export interface Clock {
  /** Injected so tests can move time; production uses Date.now. */
  now?: (() => Date) | undefined;
}

export const nowOf = (deps: Clock): Date => (deps.now ? deps.now() : new Date());

interface PendingNudge {
  promise: Promise<unknown>;
  firstAt: number;
  /** When it goes: each nudge of the burst moves it later; its timer looks when it fires. */
  dueAt: number;
}

/** Per control plane: nudges waiting to be sent, and when each pool's last one was sent. */
interface NudgeState {
  pending: Map<string, PendingNudge>;
  sentAt: Map<string, number>;
}

/** The reconcile nudges of one control plane (its Resources' devices hold them). */
export const reconcileNudges = defineDevice('reconcile nudges', (): NudgeState => ({
  pending: new Map(),
  sentAt: new Map(),
}));
/** A nudge goes this long after the last one of a burst… */
const NUDGE_QUIET_MS = 20;
/** …and never later than this after the first… */
const NUDGE_MAX_DELAY_MS = 100;
/** …but never sooner than this after the pool's previous one (it waits; it is not dropped). */
const NUDGE_MIN_INTERVAL_MS = 500;

/**
 * nudgeReconcile asks the worker to reconcile a pool soon. Nudges of one control plane share one
 * enqueue: it is sent 20 ms after the last nudge of a burst, at most 100 ms after the first, so
 * a burst of claims becomes one reconcile that runs after the burst instead of beside it (the
 * reconcile's queries would compete with the claims for the database and CPU; a refill that
 * starts a few ms later is immaterial next to a desktop's start). A steady stream is not a
 * burst: at 15 claims a second on one pool (bench:scale) the 20 ms quiet window closes between
 * claims, so every claim was its own reconcile; one pool is therefore nudged at most every
 * 500 ms per process, and a nudge inside that window waits for its end.
 * Across processes BullMQ's deduplication merges them. Callers do not wait for it (the promise
 * is for tests): a lost nudge is harmless, the periodic sweep reconciles every pool.
 */
export function nudgeReconcile(
  deps: Pick<Deps, 'queues' | 'devices'>,
  tenantId: string,
  poolId: string,
): Promise<unknown> {
  const { pending: byPool, sentAt } = deps.devices.of(reconcileNudges);
  const now = Date.now();
  // When the nudge may go: the burst rule, held back by the pool's minimum interval.
  const dueAt = (firstAt: number) =>
    Math.max(
      Math.min(now + NUDGE_QUIET_MS, firstAt + NUDGE_MAX_DELAY_MS),
      (sentAt.get(poolId) ?? -Infinity) + NUDGE_MIN_INTERVAL_MS,
    );
  const pending = byPool.get(poolId);
  if (pending) {
    pending.dueAt = dueAt(pending.firstAt);
    return pending.promise;
  }
  let send!: () => void;
  const promise = new Promise<void>((resolve) => (send = resolve)).then(() => {
    // Leave the map before enqueueing: a claim committed from now on needs a nudge of its own.
    byPool.delete(poolId);
    const at = Date.now();
    sentAt.set(poolId, at);
    // Kept only while it can hold a nudge back: the map holds the pools nudged lately, no more.
    setTimeout(() => {
      if (sentAt.get(poolId) === at) sentAt.delete(poolId);
    }, NUDGE_MIN_INTERVAL_MS).unref();
    return deps.queues
      .enqueue(
        'pool.reconcile',
        { tenant_id: tenantId, pool_id: poolId },
        { dedupe: { id: `reconcile-${poolId}`, ttlMs: 50 } },
      )
      .catch(() => undefined);
  });
  const entry: PendingNudge = { promise, firstAt: now, dueAt: dueAt(now) };
  byPool.set(poolId, entry);
  // One timer, re-armed only when it fires before a later nudge's due time. Re-arming it on
  // every claim of a burst (clearTimeout + setTimeout, each with another delay) was a timer-list
  // insert per claim: ~5 % of the API's CPU in bench:claim's bursts.
  const fire = () => {
    const wait = entry.dueAt - Date.now();
    if (wait > 0) setTimeout(fire, wait);
    else send();
  };
  setTimeout(fire, entry.dueAt - now);
  return promise;
}
