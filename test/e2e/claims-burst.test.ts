import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, waitFor, type Stack } from './support/stack.js';

/** The burst: 200 concurrent REST claims on a pool of 20 warm real desktops. */
describe('200 concurrent claims on 20 warm desktops', () => {
  let s: Stack;
  beforeAll(async () => {
    s = await startStack();
  });
  afterAll(async () => s?.close());

  it('exactly 20 get a desktop at once, none twice; the rest are pending and get desktops as the pool grows', async () => {
    const call = (method: string, url: string, payload?: unknown) =>
      s.api.inject({ method: method as 'GET', url, payload: payload as object, headers: s.auth });
    expect(
      (
        await call('PUT', '/v1/pools/burst', {
          image: 'local',
          autoscaling: { min: 0, initial: 20, max: 22 },
        })
      ).statusCode,
    ).toBe(201);
    await waitFor(
      async () => (await call('GET', '/v1/pools/burst')).json().counts.warm === 20,
      240_000,
      250,
    );

    // The default tenant quota is 100 concurrent claims; this burst is about the pool, not the quota.
    await s.db.tenant.update({ where: { id: s.tenantId }, data: { maxConcurrentClaims: 1000 } });
    const results = await Promise.all(
      Array.from({ length: 200 }, () =>
        call('POST', '/v1/pools/burst/claims', { wait_seconds: 0 }),
      ),
    );
    const active = results.filter((r) => r.statusCode === 201).map((r) => r.json());
    const pending = results.filter((r) => r.statusCode === 202).map((r) => r.json());
    expect(active).toHaveLength(20);
    expect(pending).toHaveLength(180);
    expect(new Set(active.map((c) => c.sandbox.id)).size).toBe(20);
    expect(pending.every((c) => c.status === 'pending' && c.sandbox === null)).toBe(true);

    // The pool's max leaves room for 2 more: two pending claims become active (oldest first; the
    // order itself is checked deterministically in packages/control-plane/test/claims.test.ts).
    await waitFor(
      async () => (await s.db.claim.count({ where: { status: 'active' } })) === 22,
      120_000,
      250,
    );
    const activated = await s.db.claim.findMany({
      where: { status: 'active', id: { in: pending.map((c) => c.id) } },
    });
    expect(activated).toHaveLength(2);
    const holders = await s.db.claim.groupBy({
      by: ['sandboxId'],
      where: { sandboxId: { not: null } },
      _count: { _all: true },
    });
    expect(holders.every((h) => h._count._all === 1)).toBe(true);
  });
});
