import { CreateClaimRequest, PoolSpec } from '@cubicle/contract/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  applyPool,
  createClaim,
  deletePool,
  getPool,
  newKeyringSpec,
  parseKeyring,
  reconcilePool,
  type WorkerDeps,
} from '../src/index.js';
import { newId, sqlPoolOf } from '@cubicle/db';
import { seedWarm, world, type World } from './setup.js';

const after = <T>(ms: number, value: T) => new Promise<T>((r) => setTimeout(() => r(value), ms));

/**
 * Reconcile against real Postgres and BullMQ. No backend is configured here: reconcile only
 * decides and enqueues; provisioning and destruction have their own suites on real desktops.
 */
describe('reconcile', () => {
  let w: World;
  let deps: WorkerDeps;
  beforeAll(async () => {
    w = await world();
    deps = { ...w.deps, backends: {}, keyring: parseKeyring(newKeyringSpec()) };
  });
  afterAll(async () => w?.close());

  const jobsFor = async (name: string, ids: string[]) =>
    (
      await w.queues
        .queue('sandboxes')
        .getJobs(['waiting', 'delayed', 'active', 'completed', 'failed'])
    ).filter((j) => j.name === name && ids.includes(j.data.sandbox_id)).length;

  it('creates the warm buffer once, even when run concurrently', async () => {
    const { pool } = await applyPool(
      w.deps,
      w.tenantId,
      'fill',
      PoolSpec.parse({ image: 'a', autoscaling: { min: 1, initial: 3, max: 5 } }),
    );
    await Promise.all([
      reconcilePool(deps, w.tenantId, pool.id),
      reconcilePool(deps, w.tenantId, pool.id),
      reconcilePool(deps, w.tenantId, pool.id),
    ]);
    const rows = await w.db.sandbox.findMany({ where: { poolId: pool.id } });
    expect(rows).toHaveLength(3);
    expect(rows.every((r) => r.state === 'provisioning' && r.generation === 1)).toBe(true);
    expect(
      await jobsFor(
        'sandbox.provision',
        rows.map((r) => r.id),
      ),
    ).toBe(3);
    expect((await getPool(w.deps, w.tenantId, 'fill')).counts.provisioning).toBe(3);
  });

  it('an image change rolls warm sandboxes but leaves claimed ones; the same spec again changes nothing', async () => {
    const spec = PoolSpec.parse({ image: 'v1', autoscaling: { min: 0, initial: 2, max: 4 } });
    const { pool } = await applyPool(w.deps, w.tenantId, 'roll', spec);
    const warm = await seedWarm(w.db, w.tenantId, pool.id, 3);
    const { claim } = await createClaim(
      w.deps,
      w.tenantId,
      'roll',
      CreateClaimRequest.parse({ wait_seconds: 0 }),
    );
    const again = await applyPool(w.deps, w.tenantId, 'roll', spec);
    expect(again.pool.generation).toBe(1);
    const changed = await applyPool(w.deps, w.tenantId, 'roll', { ...spec, image: 'v2' });
    expect(changed.pool.generation).toBe(2);

    const result = await reconcilePool(deps, w.tenantId, pool.id);
    expect(result.rolled).toBe(2);
    const byId = new Map(
      (await w.db.sandbox.findMany({ where: { poolId: pool.id } })).map((s) => [s.id, s]),
    );
    expect(byId.get(claim.sandbox!.id)!.state).toBe('claimed');
    const rolled = warm.filter((id) => id !== claim.sandbox!.id);
    expect(rolled.every((id) => byId.get(id)!.state === 'releasing')).toBe(true);
    expect(await jobsFor('sandbox.destroy', rolled)).toBe(2);
    const fresh = [...byId.values()].filter((s) => s.generation === 2);
    expect(fresh).toHaveLength(2);
    expect(fresh.every((s) => s.image === 'v2' && s.state === 'provisioning')).toBe(true);
  });

  it('a settled pool is reconciled by one read without its lock; a pool with work gets the whole pass', async () => {
    const { pool } = await applyPool(
      w.deps,
      w.tenantId,
      'settled',
      PoolSpec.parse({ image: 'a', autoscaling: { min: 2, initial: 2, max: 2 } }),
    );
    await seedWarm(w.db, w.tenantId, pool.id, 2);
    // Another session holds the pool's reconcile lock: the whole pass would wait for it.
    const holder = await sqlPoolOf(w.db).connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`reconcile:${pool.id}`]);
      const settled = await Promise.race([
        reconcilePool(deps, w.tenantId, pool.id),
        after(5_000, 'waited for the lock'),
      ]);
      expect(settled).toEqual({ created: 0, rolled: 0, drained: 0, fulfilled: 0, timedOut: 0 });

      // A sandbox left provisioning whose job was lost: there is work (re-enqueue it), so the
      // reconcile takes the whole pass, behind the lock.
      const lost = newId('sandbox');
      await w.db.sandbox.create({
        data: {
          id: lost,
          tenantId: w.tenantId,
          poolId: pool.id,
          backend: 'local',
          image: 'a',
          generation: 1,
          state: 'provisioning',
        },
      });
      const pass = reconcilePool(deps, w.tenantId, pool.id);
      expect(await Promise.race([pass.then(() => 'done'), after(500, 'waiting')])).toBe('waiting');
      await holder.query('COMMIT');
      expect(await pass).toMatchObject({ created: 0, timedOut: 0 });
      expect(await jobsFor('sandbox.provision', [lost])).toBe(1);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      holder.release();
    }
  });

  it('deleting a pool drains: unclaimed sandboxes go, pending claims end, live claims run on', async () => {
    const { pool } = await applyPool(
      w.deps,
      w.tenantId,
      'drain',
      PoolSpec.parse({ image: 'a', autoscaling: { min: 0, initial: 0, max: 2 } }),
    );
    await seedWarm(w.db, w.tenantId, pool.id, 2);
    const live = (
      await createClaim(w.deps, w.tenantId, 'drain', CreateClaimRequest.parse({ wait_seconds: 0 }))
    ).claim;
    await w.db.claim.create({
      data: {
        id: 'clm_01m00000000000000000000000',
        tenantId: w.tenantId,
        poolId: pool.id,
        name: 'waiting',
        status: 'pending',
        ttlSeconds: 60,
        expiresAt: new Date(Date.now() + 60_000),
        maxExpiresAt: new Date(Date.now() + 60_000),
      },
    });
    const deleted = await deletePool(w.deps, w.tenantId, 'drain');
    expect(deleted.state).toBe('draining');
    const result = await reconcilePool(deps, w.tenantId, pool.id);
    expect(result).toMatchObject({ drained: 1, created: 0 });
    expect(
      (await w.db.claim.findUniqueOrThrow({ where: { id: 'clm_01m00000000000000000000000' } }))
        .releaseReason,
    ).toBe('pool_deleted');
    expect((await w.db.claim.findUniqueOrThrow({ where: { id: live.id } })).status).toBe('active');
    expect((await w.db.sandbox.findUniqueOrThrow({ where: { id: live.sandbox!.id } })).state).toBe(
      'claimed',
    );
    // The name is free for a new pool at once.
    expect(
      (await applyPool(w.deps, w.tenantId, 'drain', PoolSpec.parse({ image: 'b' }))).created,
    ).toBe(true);
  });
});
