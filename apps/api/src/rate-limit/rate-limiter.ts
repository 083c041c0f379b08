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

/**
 * createRateLimiter counts requests in fixed windows in Redis, shared by every API replica:
 * one MULTI (INCR + PEXPIRE NX) per request, one key per subject and window that expires on
 * its own. Fixed windows allow a burst of up to 2× the limit across a window boundary; that is
 * the price of one round trip and no script. Replicas' clocks pick the window, so skew between
 * them shifts a window's edges by that skew, no more.
 */
export function createRateLimiter(redis: Redis, options: RateLimiterOptions = {}): RateLimiter {
  const windowMs = options.windowMs ?? 60_000;
  const prefix = options.prefix ?? 'cubicle:rl:';
  const now = options.now ?? Date.now;
  return {
    async consume(subject, limit) {
      const t = now();
      const window = Math.floor(t / windowMs);
      const key = `${prefix}${subject}:${window}`;
      const results = await redis
        .multi()
        .incr(key)
        .pexpire(key, windowMs + 1_000, 'NX')
        .exec();
      const [incrErr, count] = results?.[0] ?? [new Error('rate limit transaction aborted')];
      if (incrErr) throw incrErr;
      const used = Number(count);
      const resetSeconds = Math.max(1, Math.ceil(((window + 1) * windowMs - t) / 1000));
      return {
        isAllowed: used <= limit,
        limit,
        remaining: Math.max(0, limit - used),
        resetSeconds,
      };
    },
  };
}
