import { AppError } from '@cubicle/contract/errors';
import { newId, type Db } from '@cubicle/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkQuota, createTenant } from '../src/index.js';
import { databaseFixture } from './tenancy-fixture.js';

describe('checkQuota', () => {
  let fx: Awaited<ReturnType<typeof databaseFixture>>;
  let db: Db;
  beforeAll(async () => {
    fx = await databaseFixture();
    db = fx.db;
  });
  afterAll(async () => fx?.close());

  const addPool = (tenantId: string, name: string, deletedAt: Date | null = null) =>
    db.pool.create({
      data: {
        id: newId('pool'),
        tenantId,
        name,
        image: 'desktop:1',
        backend: 'local',
        cpuMillis: 1000,
        memoryMb: 1024,
        minSize: 0,
        initialSize: 0,
        maxSize: 1,
        claimTtlSeconds: 60,
        maxClaimLifetimeSeconds: 600,
        deletedAt,
      },
    });

  it('counts live pools and throws quota_exceeded with quota and limit', async () => {
    const t = await createTenant(db, { name: 'Small', quotas: { max_pools: 2 } });
    await addPool(t.id, 'a');
    await addPool(t.id, 'gone', new Date()); // deleted pools do not count
    expect(await db.$transaction((tx) => checkQuota(tx, t.id, 'pools'))).toEqual({
      quota: 'pools',
      limit: 2,
      used: 1,
    });
    await addPool(t.id, 'b');
    const err = await db
      .$transaction((tx) => checkQuota(tx, t.id, 'pools'))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({
      code: 'quota_exceeded',
      details: { quota: 'pools', limit: 2, used: 2 },
    });
    // adding: 0 asks "am I within the quota at all".
    await expect(
      db.$transaction((tx) => checkQuota(tx, t.id, 'pools', { adding: 0 })),
    ).resolves.toMatchObject({ used: 2 });
  });

  it('counts sandboxes and claims by state, and refuses an unknown tenant', async () => {
    const t = await createTenant(db, {
      name: 'States',
      quotas: { max_sandboxes: 1, max_concurrent_claims: 0 },
    });
    const pool = await addPool(t.id, 'p');
    for (const state of ['failed', 'deleted'] as const) {
      await db.sandbox.create({
        data: {
          id: newId('sandbox'),
          tenantId: t.id,
          poolId: pool.id,
          state,
          backend: 'local',
          image: 'x',
          generation: 1,
        },
      });
    }
    await expect(db.$transaction((tx) => checkQuota(tx, t.id, 'sandboxes'))).resolves.toMatchObject(
      { used: 0 },
    );
    await expect(
      db.$transaction((tx) => checkQuota(tx, t.id, 'sandboxes', { adding: 2 })),
    ).rejects.toMatchObject({
      code: 'quota_exceeded',
    });
    await expect(
      db.$transaction((tx) => checkQuota(tx, t.id, 'concurrent_claims')),
    ).rejects.toMatchObject({
      details: { quota: 'concurrent_claims', limit: 0 },
    });
    await expect(
      db.$transaction((tx) => checkQuota(tx, `ten_${'0'.repeat(26)}`, 'pools')),
    ).rejects.toMatchObject({ code: 'not_found' });
  });

  it('lets exactly one of two concurrent transactions take the last unit', async () => {
    const t = await createTenant(db, { name: 'Race', quotas: { max_pools: 1 } });
    let arrived = 0;
    const attempt = (name: string) =>
      db.$transaction(async (tx) => {
        await checkQuota(tx, t.id, 'pools');
        arrived++;
        // Hold the transaction open so the other one queues on the tenant lock.
        await new Promise((r) => setTimeout(r, 150));
        await tx.pool.create({
          data: {
            id: newId('pool'),
            tenantId: t.id,
            name,
            image: 'x',
            backend: 'local',
            cpuMillis: 1,
            memoryMb: 1,
            minSize: 0,
            initialSize: 0,
            maxSize: 1,
            claimTtlSeconds: 1,
            maxClaimLifetimeSeconds: 1,
          },
        });
      });
    const results = await Promise.allSettled([attempt('one'), attempt('two')]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.find((r) => r.status === 'rejected');
    expect(rejected?.status === 'rejected' && rejected.reason).toMatchObject({
      code: 'quota_exceeded',
    });
    expect(arrived).toBe(1);
    expect(await db.pool.count({ where: { tenantId: t.id } })).toBe(1);
  });
});
