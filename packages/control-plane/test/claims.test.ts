import { CreateClaimRequest, PoolSpec } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { sqlPoolOf } from '@cubicle/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  applyPool,
  createClaim,
  extendClaim,
  getClaim,
  heartbeatClaim,
  listClaims,
  reclaimClaims,
  releaseClaim,
} from '../src/index.js';
import { fulfilPendingClaims } from '../src/claims/fulfil-claims.js';
import { seedWarm, world, type World } from './setup.js';

const req = (input: Record<string, unknown> = {}) =>
  CreateClaimRequest.parse({ wait_seconds: 0, ...input });
const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: unknown) => (e instanceof AppError ? e.code : String(e)),
  );

describe('claims on real Postgres', () => {
  let w: World;
  beforeAll(async () => {
    w = await world();
  });
  afterAll(async () => w?.close());

  it('200 concurrent claims on 20 warm sandboxes: exactly 20 active, no sandbox twice, the rest pending', async () => {
    const { pool } = await applyPool(
      w.deps,
      w.tenantId,
      'burst',
      PoolSpec.parse({ image: 'img', autoscaling: { min: 0, initial: 0, max: 20 } }),
    );
    await seedWarm(w.db, w.tenantId, pool.id, 20);
    const results = await Promise.all(
      Array.from({ length: 200 }, () => createClaim(w.deps, w.tenantId, 'burst', req())),
    );
    const active = results.filter((r) => r.status === 201);
    const pending = results.filter((r) => r.status === 202);
    expect(active).toHaveLength(20);
    expect(pending).toHaveLength(180);
    expect(pending.every((r) => r.claim.status === 'pending' && r.claim.sandbox === null)).toBe(
      true,
    );
    const sandboxIds = active.map((r) => r.claim.sandbox!.id);
    expect(new Set(sandboxIds).size).toBe(20);
    expect(await w.db.sandbox.count({ where: { poolId: pool.id, state: 'claimed' } })).toBe(20);
    expect(await w.db.claim.count({ where: { poolId: pool.id, status: 'active' } })).toBe(20);
  });

  it('idempotency: same key and body → one claim; other body → 409; concurrent retries → one claim', async () => {
    const { pool } = await applyPool(w.deps, w.tenantId, 'idem', PoolSpec.parse({ image: 'img' }));
    await seedWarm(w.db, w.tenantId, pool.id, 3);
    const scope = 'POST /v1/pools/idem/claims';
    const first = await createClaim(w.deps, w.tenantId, 'idem', req({ metadata: { job: '1' } }), {
      key: 'k-1',
      scope,
    });
    const again = await createClaim(w.deps, w.tenantId, 'idem', req({ metadata: { job: '1' } }), {
      key: 'k-1',
      scope,
    });
    expect(again.claim.id).toBe(first.claim.id);
    expect(again.status).toBe(first.status);
    expect(
      await codeOf(
        createClaim(w.deps, w.tenantId, 'idem', req({ metadata: { job: '2' } }), {
          key: 'k-1',
          scope,
        }),
      ),
    ).toBe('idempotency_key_reused');

    const racing = await Promise.all(
      Array.from({ length: 10 }, () =>
        createClaim(w.deps, w.tenantId, 'idem', req(), { key: 'k-race', scope }),
      ),
    );
    expect(new Set(racing.map((r) => r.claim.id)).size).toBe(1);
    expect(await w.db.claim.count({ where: { poolId: pool.id } })).toBe(2);
    // The same key in another tenant is another request.
    const { pool: otherPool } = await applyPool(
      w.deps,
      w.otherTenantId,
      'idem',
      PoolSpec.parse({ image: 'img' }),
    );
    await seedWarm(w.db, w.otherTenantId, otherPool.id, 1);
    const other = await createClaim(
      w.deps,
      w.otherTenantId,
      'idem',
      req({ metadata: { job: '1' } }),
      { key: 'k-1', scope },
    );
    expect(other.claim.id).not.toBe(first.claim.id);
  });

  it('a live claim name is a reconnect, also when racing', async () => {
    const { pool } = await applyPool(w.deps, w.tenantId, 'named', PoolSpec.parse({ image: 'img' }));
    await seedWarm(w.db, w.tenantId, pool.id, 5);
    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        createClaim(w.deps, w.tenantId, 'named', req({ name: 'agent-7' })),
      ),
    );
    expect(new Set(results.map((r) => r.claim.id)).size).toBe(1);
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 200)).toHaveLength(7);
    // After release the name is free and a new claim gets a new sandbox.
    const first = results[0]!.claim;
    await releaseClaim(w.deps, w.tenantId, first.id);
    const next = await createClaim(w.deps, w.tenantId, 'named', req({ name: 'agent-7' }));
    expect(next.status).toBe(201);
    expect(next.claim.id).not.toBe(first.id);
    expect(next.claim.sandbox!.id).not.toBe(first.sandbox!.id);
  });

  it('claims sent together: one refused by the database is rolled back alone, its sandbox stays warm', async () => {
    const { pool } = await applyPool(w.deps, w.tenantId, 'batch', PoolSpec.parse({ image: 'img' }));
    await seedWarm(w.db, w.tenantId, pool.id, 12);
    const scope = 'POST /v1/pools/batch/claims';
    // One burst (the batcher groups what arrives while a batch is in flight): plain claims, two
    // with one name (the second hits claims_live_name_key) and two with one key (the second hits
    // the idempotency key's unique index).
    const results = await Promise.all([
      ...Array.from({ length: 6 }, () => createClaim(w.deps, w.tenantId, 'batch', req())),
      createClaim(w.deps, w.tenantId, 'batch', req({ name: 'twin' })),
      createClaim(w.deps, w.tenantId, 'batch', req({ name: 'twin' })),
      createClaim(w.deps, w.tenantId, 'batch', req(), { key: 'batch-k', scope }),
      createClaim(w.deps, w.tenantId, 'batch', req(), { key: 'batch-k', scope }),
    ]);
    const ids = new Set(results.map((r) => r.claim.id));
    expect(ids.size).toBe(8); // 6 + one "twin" + one for the key
    expect(results[6]!.claim.id).toBe(results[7]!.claim.id);
    expect(results[8]!.claim.id).toBe(results[9]!.claim.id);
    expect(results.every((r) => r.claim.status === 'active')).toBe(true);
    // Every claimed sandbox belongs to exactly one claim; the refused items took none.
    expect(await w.db.sandbox.count({ where: { poolId: pool.id, state: 'claimed' } })).toBe(8);
    expect(await w.db.sandbox.count({ where: { poolId: pool.id, state: 'warm' } })).toBe(4);
    expect(await w.db.claim.count({ where: { poolId: pool.id } })).toBe(8);
  });

  it("a claim is recorded as its pool says, from the claim statement's answer (no second read of the pool)", async () => {
    const { pool } = await applyPool(
      w.deps,
      w.tenantId,
      'recorded',
      PoolSpec.parse({ image: 'img', recording: { video: true, fps: 3 } }),
    );
    const { pool: plain } = await applyPool(
      w.deps,
      w.tenantId,
      'unrecorded',
      PoolSpec.parse({ image: 'img' }),
    );
    await seedWarm(w.db, w.tenantId, pool.id, 2);
    await seedWarm(w.db, w.tenantId, plain.id, 1);
    // Which models of the ORM the claim path touches: the statement itself runs on the batcher's
    // own connection pool, so a plain claim should touch none.
    const touched: string[] = [];
    const db = new Proxy(w.db, {
      get(target, key, receiver) {
        if (typeof key === 'string' && !key.startsWith('$')) touched.push(key);
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
    const deps = { ...w.deps, db };
    const recorded = await createClaim(deps, w.tenantId, 'recorded', req());
    const declined = await createClaim(
      deps,
      w.tenantId,
      'recorded',
      req({ recording: { video: false } }),
    );
    expect(touched.filter((m) => m === 'pool')).toEqual([]);
    touched.length = 0;
    const unrecorded = await createClaim(deps, w.tenantId, 'unrecorded', req());
    expect(touched).toEqual([]);
    expect(
      await w.db.recording.findUnique({ where: { claimId: recorded.claim.id } }),
    ).toMatchObject({ fps: 3, quality: 'medium' });
    expect(await w.db.recording.count({ where: { claimId: declined.claim.id } })).toBe(0);
    expect(await w.db.recording.count({ where: { claimId: unrecorded.claim.id } })).toBe(0);
  });

  it('release is idempotent and never returns the sandbox to the pool', async () => {
    const { pool } = await applyPool(w.deps, w.tenantId, 'rel', PoolSpec.parse({ image: 'img' }));
    await seedWarm(w.db, w.tenantId, pool.id, 1);
    const { claim } = await createClaim(w.deps, w.tenantId, 'rel', req());
    const released = await releaseClaim(w.deps, w.tenantId, claim.id);
    expect(released).toMatchObject({ status: 'released', release_reason: 'released_by_client' });
    expect((await releaseClaim(w.deps, w.tenantId, claim.id)).released_at).toBe(
      released.released_at,
    );
    // The statement answers the sandbox without its guest token's ciphertext (never rendered).
    const { rows } = await sqlPoolOf(w.db).query(
      `SELECT ended, sandbox FROM cubicle_end_claim($1, $2, 'released_by_client', now(),
                                                    '{}'::text[], 'evt_test')`,
      [w.tenantId, claim.id],
    );
    expect(rows).toEqual([
      { ended: false, sandbox: expect.objectContaining({ id: claim.sandbox!.id }) },
    ]);
    expect(rows[0].sandbox).not.toHaveProperty('guest_token_ciphertext');
    expect((await w.db.sandbox.findUniqueOrThrow({ where: { id: claim.sandbox!.id } })).state).toBe(
      'releasing',
    );
    const jobs = await w.queues.queue('sandboxes').getJobs(['waiting', 'delayed', 'active']);
    expect(
      jobs.some((j) => j.name === 'sandbox.destroy' && j.data.sandbox_id === claim.sandbox!.id),
    ).toBe(true);
    expect((await createClaim(w.deps, w.tenantId, 'rel', req())).status).toBe(202);
    expect(await codeOf(heartbeatClaim(w.deps, w.tenantId, claim.id))).toBe('claim_not_active');
    expect(await codeOf(extendClaim(w.deps, w.tenantId, claim.id, 60))).toBe('claim_not_active');
    expect((await getClaim(w.deps, w.tenantId, claim.id)).released_at).toBe(released.released_at);
  });

  it('TTL, heartbeat window and hard maximum are enforced by the reclaim sweep', async () => {
    // The sweep is global by design, so this test gets a database of its own.
    const own = await world();
    const w = own;
    const { pool } = await applyPool(
      w.deps,
      w.tenantId,
      'ttl',
      PoolSpec.parse({
        image: 'img',
        idle_timeout_seconds: 60,
        max_claim_lifetime_seconds: 3600,
        claim_ttl_seconds: 600,
      }),
    );
    await seedWarm(w.db, w.tenantId, pool.id, 3);
    let now = new Date();
    const deps = { ...w.deps, now: () => now };
    const short = (await createClaim(deps, w.tenantId, 'ttl', req({ ttl_seconds: 2 }))).claim;
    const idle = (await createClaim(deps, w.tenantId, 'ttl', req())).claim;
    const long = (await createClaim(deps, w.tenantId, 'ttl', req())).claim;

    now = new Date(now.getTime() + 30_000);
    expect((await heartbeatClaim(deps, w.tenantId, long.id)).last_heartbeat_at).toBe(
      now.toISOString(),
    );
    expect((await reclaimClaims(deps)).map((r) => [r.id, r.reason])).toEqual([
      [short.id, 'ttl_expired'],
    ]);

    now = new Date(now.getTime() + 45_000); // idle: 75 s without heartbeat; long: 45 s since its heartbeat
    expect((await reclaimClaims(deps)).map((r) => [r.id, r.reason])).toEqual([
      [idle.id, 'idle_timeout'],
    ]);
    expect((await getClaim(deps, w.tenantId, long.id)).status).toBe('active');

    // Extending sets the TTL from now and counts as a heartbeat…
    const renewed = await extendClaim(deps, w.tenantId, long.id, 120);
    expect(renewed).toMatchObject({
      ttl_seconds: 120,
      expires_at: new Date(now.getTime() + 120_000).toISOString(),
      last_heartbeat_at: now.toISOString(),
    });
    // …capped at the hard maximum, which the sweep enforces even with heartbeats.
    const extended = await extendClaim(deps, w.tenantId, long.id, 7 * 86_400);
    expect(extended.expires_at).toBe(extended.max_expires_at);
    now = new Date(new Date(extended.max_expires_at).getTime() + 1);
    await w.db.claim.update({ where: { id: long.id }, data: { lastHeartbeatAt: now } });
    expect((await reclaimClaims(deps)).map((r) => [r.id, r.reason])).toEqual([
      [long.id, 'max_lifetime'],
    ]);
    expect(await reclaimClaims(deps)).toEqual([]);
    await own.close();
  });

  it("tenants see only their own claims; another tenant's id is not_found", async () => {
    const { pool } = await applyPool(w.deps, w.tenantId, 'iso', PoolSpec.parse({ image: 'img' }));
    await seedWarm(w.db, w.tenantId, pool.id, 1);
    const { claim } = await createClaim(w.deps, w.tenantId, 'iso', req());
    for (const call of [
      () => getClaim(w.deps, w.otherTenantId, claim.id),
      () => heartbeatClaim(w.deps, w.otherTenantId, claim.id),
      () => extendClaim(w.deps, w.otherTenantId, claim.id, 60),
      () => releaseClaim(w.deps, w.otherTenantId, claim.id),
      () => createClaim(w.deps, w.otherTenantId, 'iso', req()),
    ]) {
      expect(await codeOf(call())).toBe('not_found');
    }
    expect((await getClaim(w.deps, w.tenantId, claim.id)).status).toBe('active');
    const mine = await listClaims(w.deps, w.otherTenantId, { limit: 200 });
    expect(mine.data.some((c) => c.id === claim.id)).toBe(false);
  });

  it('a tenant over its concurrent-claims quota gets quota_exceeded with the limit, and nothing changes', async () => {
    const { pool } = await applyPool(
      w.deps,
      w.otherTenantId,
      'quota',
      PoolSpec.parse({ image: 'img' }),
    );
    await seedWarm(w.db, w.otherTenantId, pool.id, 3);
    await w.db.tenant.update({ where: { id: w.otherTenantId }, data: { maxConcurrentClaims: 2 } });
    const live = await w.db.claim.count({
      where: { tenantId: w.otherTenantId, status: { not: 'released' } },
    });
    for (let i = live; i < 2; i++) await createClaim(w.deps, w.otherTenantId, 'quota', req());
    const warmBefore = await w.db.sandbox.count({ where: { poolId: pool.id, state: 'warm' } });
    const err = await createClaim(w.deps, w.otherTenantId, 'quota', req()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('quota_exceeded');
    expect((err as AppError).details).toMatchObject({ quota: 'concurrent_claims', limit: 2 });
    expect(await w.db.sandbox.count({ where: { poolId: pool.id, state: 'warm' } })).toBe(
      warmBefore,
    );
  });

  it('pending claims get warm sandboxes oldest first', async () => {
    const { pool } = await applyPool(
      w.deps,
      w.tenantId,
      'fifo',
      PoolSpec.parse({ image: 'img', autoscaling: { min: 0, initial: 0, max: 9 } }),
    );
    let now = new Date();
    const deps = { ...w.deps, now: () => now };
    const pending = [];
    for (let i = 0; i < 5; i++) {
      now = new Date(now.getTime() + 10);
      pending.push((await createClaim(deps, w.tenantId, 'fifo', req())).claim);
    }
    expect(pending.every((c) => c.status === 'pending')).toBe(true);
    await seedWarm(w.db, w.tenantId, pool.id, 2);
    const row = await w.db.pool.findUniqueOrThrow({ where: { id: pool.id } });
    expect(await fulfilPendingClaims(w.deps, row)).toBe(2);
    const statuses = await Promise.all(
      pending.map(async (c) => (await getClaim(w.deps, w.tenantId, c.id)).status),
    );
    expect(statuses).toEqual(['active', 'active', 'pending', 'pending', 'pending']);
  });

  it('lists newest first with a cursor', async () => {
    const page1 = await listClaims(w.deps, w.tenantId, { limit: 5 });
    const page2 = await listClaims(w.deps, w.tenantId, { limit: 5, cursor: page1.next_cursor! });
    expect(page1.data).toHaveLength(5);
    expect(page2.data[0]!.id < page1.data[4]!.id).toBe(true);
  });
});
