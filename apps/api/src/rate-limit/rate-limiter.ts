import type { Redis } from 'ioredis';

export interface RateLimitResult {
  isAllowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the current window ends (at least 1): the `Retry-After` value. */
  resetSeconds: number;
}

export interface RateLimiter {
  /** consume counts one request for `subject` against `limit` per window. */
  consume(subject: string, limit: number): Promise<RateLimitResult>;
}

export interface RateLimiterOptions {
  windowMs?: number;
  /** Key namespace; the counters are `<prefix><subject>:<window index>`. */
  prefix?: string;
  now?: () => number;
}

/** Tokens this process took from a subject's window counter and has not used yet. */
interface Lease {
  window: number;
  /** Tokens granted to this process and not yet used. */
  left: number;
  /** The shared counter after our last lease (every replica's leases included). */
  count: number;
  /** In-flight lease request, shared by the requests that wait for it. */
  fetching: Promise<void> | null;
  /** Requests of this process waiting for tokens (the next lease's size). */
  waiting: number;
}

/** A lease is 1% of the limit (at least 1, at most 50 tokens): see createRateLimiter. */
const leaseSize = (limit: number) => Math.min(50, Math.max(1, Math.ceil(limit / 100)));

/**
 * createRateLimiter counts requests in fixed windows in Redis, shared by every API replica. A
 * replica takes tokens in leases (INCRBY of up to 1% of the limit) and spends them locally, so a
 * burst of requests costs one Redis round trip, not one each; once the shared counter reaches
 * the limit, the rest of the window is refused without asking Redis again. The price: tokens a
 * replica leased and did not use are lost to the others for that window (at most 1% of the limit
 * per replica), and fixed windows allow a burst of up to 2× the limit across a boundary.
 * Replicas' clocks pick the window, so skew between them shifts a window's edges by that skew.
 */
export function createRateLimiter(redis: Redis, options: RateLimiterOptions = {}): RateLimiter {
  const windowMs = options.windowMs ?? 60_000;
  const prefix = options.prefix ?? 'cubicle:rl:';
  const now = options.now ?? Date.now;
  const leases = new Map<string, Lease>();

  async function fetchLease(subject: string, lease: Lease, limit: number) {
    const key = `${prefix}${subject}:${lease.window}`;
    const size = Math.max(leaseSize(limit), lease.waiting);
    const results = await redis
      .multi()
      .incrby(key, size)
      .pexpire(key, windowMs + 1_000, 'NX')
      .exec();
    const [incrErr, count] = results?.[0] ?? [new Error('rate limit transaction aborted')];
    if (incrErr) throw incrErr;
    lease.count = Number(count);
    // Only the part of this lease below the limit is ours to spend.
    lease.left += Math.max(0, Math.min(size, limit - (lease.count - size)));
  }

  return {
    async consume(subject, limit) {
      const t = now();
      const window = Math.floor(t / windowMs);
      const resetSeconds = Math.max(1, Math.ceil(((window + 1) * windowMs - t) / 1000));
      let lease = leases.get(subject);
      if (!lease || lease.window !== window) {
        lease = { window, left: 0, count: 0, fetching: null, waiting: 0 };
        leases.set(subject, lease);
        // One entry per active subject: forget those of earlier windows as new ones appear.
        for (const [s, l] of leases) if (l.window < window) leases.delete(s);
      }
      lease.waiting++;
      try {
        while (lease.left === 0 && lease.count < limit) {
          lease.fetching ??= fetchLease(subject, lease, limit).finally(() => {
            lease!.fetching = null;
          });
          await lease.fetching;
        }
      } finally {
        lease.waiting--;
      }
      const isAllowed = lease.left > 0;
      if (isAllowed) lease.left--;
      return {
        isAllowed,
        limit,
        remaining: Math.max(0, limit - lease.count + lease.left),
        resetSeconds,
      };
    },
  };
}
