import { CreateClaimRequest, PoolSpec } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { createDb, type Db } from '@cubicle/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  applyPool,
  createClaim,
  createResources,
  reclaimClaims,
  releaseClaim,
  type Deps,
} from '../src/index.js';
import { fulfilPendingClaims } from '../src/claims/fulfil-claims.js';
import { seedWarm, world, type World } from './setup.js';

const req = (over: Partial<CreateClaimRequest> = {}) =>
  CreateClaimRequest.parse({ wait_seconds: 0, ...over });

const outcomeOf = (p: Promise<{ status: number }>) =>
  p.then(
    (r) => `ok:${r.status}`,
    (e: unknown) => (e instanceof AppError ? e.code : `error:${String(e)}`),
  );

/** The counter the quota reads, beside the count it replaces. */
async function counts(db: Db, tenantId: string) {
  const tenant = await db.tenant.findUniqueOrThrow({ where: { id: tenantId } });
  const live = await db.claim.count({ where: { tenantId, status: { in: ['pending', 'active'] } } });
  return { counter: tenant.liveClaims, live };
}

describe('the live-claims counter (real Postgres)', () => {
  let w: World;
  beforeAll(async () => {
    w = await world();
  });
  afterAll(async () => w?.close());

  it('equals count(*) after a burst, releases, fulfilment and reclaims', async () => {
    const { pool } = await applyPool(
      w.deps,
      w.tenantId,
      'count',
      PoolSpec.parse({
        image: 'img',
        claim_ttl_seconds: 600,
        autoscaling: { min: 0, initial: 0, max: 100 },
      }),
    );
    await seedWarm(w.db, w.tenantId, pool.id, 20);
    let now = new Date();
    const deps: Deps = { ...w.deps, now: () => now };

    const burst = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        createClaim(deps, w.tenantId, 'count', req(i % 3 === 0 ? { ttl_seconds: 60 } : {})),
      ),
    );
    expect(burst.filter((r) => r.status === 201)).toHaveLength(20);
    expect(burst.filter((r) => r.status === 202)).toHaveLength(40);
    expect(await counts(w.db, w.tenantId)).toEqual({ counter: 60, live: 60 });

    // Releases of active and pending claims, each twice at once (idempotent: counted once).
    const ended = [...burst.slice(0, 8), ...burst.slice(30, 37)].map((r) => r.claim.id);
    await Promise.all(
      [...ended, ...ended].map((id) => releaseClaim(deps, w.tenantId, id, 'released_by_client')),
    );
    expect(await counts(w.db, w.tenantId)).toEqual({ counter: 45, live: 45 });

    // Pending → active leaves the count alone.
    await seedWarm(w.db, w.tenantId, pool.id, 10);
    const row = await w.db.pool.findUniqueOrThrow({ where: { id: pool.id } });
    expect(await fulfilPendingClaims(deps, row)).toBe(10);
    expect(await counts(w.db, w.tenantId)).toEqual({ counter: 45, live: 45 });

    // The claims with a 60 s TTL that are still live, reclaimed by the sweep.
    const short = await w.db.claim.count({
      where: { tenantId: w.tenantId, status: { in: ['pending', 'active'] }, ttlSeconds: 60 },
    });
    expect(short).toBeGreaterThan(0);
    now = new Date(now.getTime() + 61_000);
    expect(await reclaimClaims(deps)).toHaveLength(short);
    expect(await counts(w.db, w.tenantId)).toEqual({ counter: 45 - short, live: 45 - short });
  });

  it('concurrent claims from two API processes never pass the quota together', async () => {
    // A second client with its own connection pool and claim batcher, as a second API process.
    const tenantId = w.otherTenantId;
    const { pool } = await applyPool(
      w.deps,
      tenantId,
      'edge',
      PoolSpec.parse({ image: 'img', autoscaling: { min: 0, initial: 0, max: 100 } }),
    );
    await seedWarm(w.db, tenantId, pool.id, 6);
    await w.db.tenant.update({ where: { id: tenantId }, data: { maxConcurrentClaims: 5 } });
    const second = createDb({ databaseUrl: w.databaseUrl, maxConnections: 8 });
    const apis: Deps[] = [w.deps, createResources({ ...w.deps, db: second })];
    try {
      for (let round = 0; round < 3; round++) {
        const { live: before } = await counts(w.db, tenantId);
        const results = await Promise.all(
          Array.from({ length: 40 }, (_, i) =>
            outcomeOf(createClaim(apis[i % 2]!, tenantId, 'edge', req())),
          ),
        );
        const passed = results.filter((r) => r.startsWith('ok:')).length;
        expect(passed).toBe(5 - before);
        expect(results.filter((r) => r === 'quota_exceeded')).toHaveLength(40 - passed);
        expect(await counts(w.db, tenantId)).toEqual({ counter: 5, live: 5 });
        // Free two units for the next round.
        const live = await w.db.claim.findMany({
          where: { tenantId, status: { in: ['pending', 'active'] } },
          take: 2,
        });
        for (const c of live) await releaseClaim(w.deps, tenantId, c.id);
        expect(await counts(w.db, tenantId)).toEqual({ counter: 3, live: 3 });
      }
    } finally {
      await second.$disconnect();
    }
  });

  it('one batch with two tenants counts each tenant its own claims, up to each quota', async () => {
    // The batch counts its new claims per run of one tenant's items (cubicle_claim_batch): claims
    // of two tenants sent at once land in the same batches, and each quota still holds.
    const tenants = [w.tenantId, w.otherTenantId];
    for (const tenantId of tenants) {
      const { pool } = await applyPool(
        w.deps,
        tenantId,
        'mixed',
        PoolSpec.parse({ image: 'img', autoscaling: { min: 0, initial: 0, max: 100 } }),
      );
      await seedWarm(w.db, tenantId, pool.id, 2);
      const { live } = await counts(w.db, tenantId);
      await w.db.tenant.update({
        where: { id: tenantId },
        data: { maxConcurrentClaims: live + 4 },
      });
    }
    const before = await Promise.all(tenants.map((t) => counts(w.db, t)));
    const results = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        outcomeOf(createClaim(w.deps, tenants[i % 2]!, 'mixed', req())),
      ),
    );
    for (const [t, tenantId] of tenants.entries()) {
      const mine = results.filter((_, i) => i % 2 === t);
      // Two from warm sandboxes, two pending, the rest over the quota.
      expect(mine.filter((r) => r === 'ok:201')).toHaveLength(2);
      expect(mine.filter((r) => r === 'ok:202')).toHaveLength(2);
      expect(mine.filter((r) => r === 'quota_exceeded')).toHaveLength(8);
      const live = before[t]!.live + 4;
      expect(await counts(w.db, tenantId)).toEqual({ counter: live, live });
    }
  });
});

describe('pending claims are fulfilled by the rules of immediate ones', () => {
  let w: World;
  beforeAll(async () => {
    w = await world();
  });
  // The claims' reconcile nudges go out up to 100 ms after them: let them leave before Redis closes.
  afterAll(async () => {
    await new Promise((r) => setTimeout(r, 150));
    await w?.close();
  });

  it('the TTL counts from activation, capped by the maximum lifetime; the warm pick is the current generation', async () => {
    const { pool } = await applyPool(
      w.deps,
      w.tenantId,
      'rules',
      PoolSpec.parse({
        image: 'img',
        max_claim_lifetime_seconds: 100,
        claim_ttl_seconds: 60,
        autoscaling: { min: 0, initial: 0, max: 10 },
      }),
    );
    const start = new Date('2026-12-01T08:00:00.000Z');
    let now = start;
    const deps: Deps = { ...w.deps, now: () => now };
    const capped = (await createClaim(deps, w.tenantId, 'rules', req({ ttl_seconds: 600 }))).claim;
    const short = (await createClaim(deps, w.tenantId, 'rules', req({ ttl_seconds: 60 }))).claim;
    expect([capped.status, short.status]).toEqual(['pending', 'pending']);

    // An old-generation warm sandbox is never picked; the current one (generation 1) is.
    const [old] = await seedWarm(w.db, w.tenantId, pool.id, 1, 0);
    const current = await seedWarm(w.db, w.tenantId, pool.id, 2, 1);
    now = new Date(start.getTime() + 30_000);
    const row = await w.db.pool.findUniqueOrThrow({ where: { id: pool.id } });
    expect(await fulfilPendingClaims(deps, row)).toBe(2);
    const got = await w.db.claim.findMany({
      where: { id: { in: [capped.id, short.id] } },
      orderBy: { createdAt: 'asc' },
    });
    const at = (ms: number) => new Date(now.getTime() + ms).toISOString();
    expect(
      got.map((c) => [c.status, c.expiresAt.toISOString(), c.maxExpiresAt.toISOString()]),
    ).toEqual([
      ['active', at(100_000), at(100_000)],
      ['active', at(60_000), at(100_000)],
    ]);
    expect(got.map((c) => c.sandboxId).sort()).toEqual([...current].sort());
    const oldRow = await w.db.sandbox.findUniqueOrThrow({ where: { id: old! } });
    expect(oldRow.state).toBe('warm');
    const taken = await w.db.sandbox.findMany({ where: { id: { in: current } } });
    expect(taken.map((s) => [s.state, s.stateReason])).toEqual([
      ['claimed', 'claimed'],
      ['claimed', 'claimed'],
    ]);
    // An immediate claim at the same moment gets the same deadlines by the same rule.
    await seedWarm(w.db, w.tenantId, pool.id, 1, 1);
    const direct = await createClaim(deps, w.tenantId, 'rules', req({ ttl_seconds: 600 }));
    expect([direct.status, direct.claim.expires_at, direct.claim.max_expires_at]).toEqual([
      201,
      at(100_000),
      at(100_000),
    ]);
  });
});
