import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRateLimiter } from '../src/rate-limit/rate-limiter.js';
import { bearer, identityFixture, type IdentityFixture } from './auth-fixtures.js';

/**
 * inOneMinute runs `fn` until one run starts and ends in the same fixed one-minute window, so
 * counts are exact (a run crossing a boundary sees two budgets).
 */
async function inOneMinute<T>(fn: () => Promise<T>): Promise<T> {
  for (;;) {
    const window = Math.floor(Date.now() / 60_000);
    const result = await fn();
    if (Math.floor(Date.now() / 60_000) === window) return result;
  }
}

describe('per-key rate limit (Redis)', () => {
  let fx: IdentityFixture;
  let app: FastifyInstance;

  beforeAll(async () => {
    fx = await identityFixture();
    app = await fx.build();
  });
  afterAll(async () => fx?.close());

  const get = (a: FastifyInstance, key: string) =>
    a.inject({ method: 'GET', url: '/v1/api-keys', headers: bearer(key) });

  it("answers 429 rate_limited with Retry-After once a key passes its tenant's requests_per_minute", async () => {
    const { t, answers } = await inOneMinute(async () => {
      const t = await fx.tenant('Limited', { requests_per_minute: 3 });
      const answers = [];
      for (let i = 0; i < 5; i++) answers.push(await get(app, t.admin.key));
      return { t, answers };
    });
    expect(answers.map((r) => r.statusCode)).toEqual([200, 200, 200, 429, 429]);
    const res = answers[3]!;
    expect(res.json().error).toMatchObject({ code: 'rate_limited', details: { limit: 3 } });
    const retryAfter = Number(res.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(answers[0]!.headers['x-ratelimit-limit']).toBe('3');
    expect(answers[2]!.headers['x-ratelimit-remaining']).toBe('0');

    // Per key: the tenant's other key has its own budget (403: a member on an admin route).
    expect((await get(app, t.member.key)).statusCode).toBe(403);
  });

  it('counts in fixed windows that restart from zero', async () => {
    const at = (ms: number) => createRateLimiter(fx.redis, { windowMs: 60_000, now: () => ms });
    const results = [];
    for (let i = 0; i < 6; i++) results.push(await at(30_000).consume('pinned', 4));
    expect(results.map((r) => r.isAllowed)).toEqual([true, true, true, true, false, false]);
    expect(results[4]).toMatchObject({ remaining: 0, resetSeconds: 30, limit: 4 });
    expect((await at(60_000).consume('pinned', 4)).isAllowed).toBe(true);
    expect(await fx.redis.pttl('cubicle:rl:pinned:0')).toBeGreaterThan(59_000);
  });

  it('is shared across replicas: two apps on one Redis count against one budget', async () => {
    const second = await fx.build();
    const statuses = await inOneMinute(async () => {
      const t = await fx.tenant('Shared', { requests_per_minute: 4 });
      const out = [];
      for (let i = 0; i < 3; i++) {
        out.push((await get(app, t.admin.key)).statusCode);
        out.push((await get(second, t.admin.key)).statusCode);
      }
      return out;
    });
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
  });

  it('leases tokens: a burst costs few Redis calls, a spent window none, and replicas share one budget', async () => {
    let multis = 0;
    const redis = fx.redis;
    const multi = redis.multi.bind(redis);
    redis.multi = ((...args: Parameters<typeof multi>) => {
      multis++;
      return multi(...args);
    }) as typeof redis.multi;
    try {
      const at = () => 90_000; // one fixed window
      const a = createRateLimiter(redis, { prefix: 'rl-lease:', now: at });
      const b = createRateLimiter(redis, { prefix: 'rl-lease:', now: at });
      // 40 at once under a limit of 1000 (leases of 10): all allowed, in a handful of calls.
      const burst = await Promise.all(Array.from({ length: 40 }, () => a.consume('k', 1000)));
      expect(burst.every((r) => r.isAllowed)).toBe(true);
      expect(multis).toBeLessThanOrEqual(4);
      // Replica b spends the rest of the shared budget; a's unused leased tokens are not b's.
      const leasedByA = Number(await redis.get('rl-lease:k:1'));
      let allowedB = 0;
      for (let r = await b.consume('k', 1000); r.isAllowed; r = await b.consume('k', 1000))
        allowedB++;
      expect(allowedB).toBe(1000 - leasedByA);
      expect(leasedByA - 40).toBeLessThan(10);
      // Once the counter reached the limit, refusals are answered without Redis.
      const before = multis;
      const refused = await Promise.all(Array.from({ length: 20 }, () => b.consume('k', 1000)));
      expect(refused.every((r) => !r.isAllowed && r.remaining === 0)).toBe(true);
      expect(multis).toBe(before);
      // a still spends what it leased, and nothing more.
      let allowedA = 0;
      for (let r = await a.consume('k', 1000); r.isAllowed; r = await a.consume('k', 1000))
        allowedA++;
      expect(40 + allowedA).toBe(leasedByA);
    } finally {
      redis.multi = multi;
    }
  });
});
