import { CreateClaimRequest, PoolSpec } from '@cubicle/contract/api';
import { createLocalBackend } from '@cubicle/backends';
import {
  applyPool,
  createClaim,
  destroySandbox,
  newKeyringSpec,
  nudgeReconcile,
  parseKeyring,
  reconcilePool,
  releaseClaim,
  type WorkerDeps,
} from '@cubicle/control-plane';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedWarm, world, type World } from '../../../packages/control-plane/test/setup.js';

/**
 * A tenant at its max_sandboxes: a released claim's sandbox keeps counting against the quota
 * until it is destroyed, so the pool can refill only after that. The destroy itself must ask for
 * the refill (a pool.reconcile job); otherwise the pool stays short until the periodic sweep.
 * Real Postgres, BullMQ and the real local backend (destroying a desktop that never started is
 * its idempotent no-op).
 */
describe('refill after a destroy at the tenant quota', () => {
  let w: World;
  let deps: WorkerDeps;
  beforeAll(async () => {
    w = await world();
    const scope = `rd${Math.random().toString(36).slice(2, 10)}`;
    deps = {
      ...w.deps,
      backends: { local: createLocalBackend({ scope }) },
      keyring: parseKeyring(newKeyringSpec()),
    };
  });
  afterAll(async () => w?.close());

  const reconcileJobs = async (poolId: string) =>
    (await w.queues.queue('reconcile').getJobs(['waiting', 'delayed', 'active'])).filter(
      (j) => j.name === 'pool.reconcile' && j.data.pool_id === poolId,
    );

  it('a destroyed sandbox nudges its pool, whose reconcile then replaces it', async () => {
    await w.db.tenant.update({ where: { id: w.tenantId }, data: { maxSandboxes: 2 } });
    const { pool } = await applyPool(
      w.deps,
      w.tenantId,
      'capped',
      PoolSpec.parse({ image: 'img', autoscaling: { min: 2, initial: 2, max: 2 } }),
    );
    await seedWarm(w.db, w.tenantId, pool.id, 2);
    const { claim, status } = await createClaim(
      w.deps,
      w.tenantId,
      'capped',
      CreateClaimRequest.parse({ wait_seconds: 0 }),
    );
    expect([status, claim.status]).toEqual([201, 'active']);
    const sandboxId = claim.sandbox!.id;
    await releaseClaim(w.deps, w.tenantId, claim.id);
    // The quota is full (one warm, one releasing): nothing can be created yet.
    await reconcilePool(deps, w.tenantId, pool.id);
    expect(await w.db.sandbox.count({ where: { poolId: pool.id, state: 'provisioning' } })).toBe(0);
    // The claim's and the release's own nudges are sent (joining them waits for that) and their
    // jobs removed, so the job looked for below can only come from the destroy.
    await nudgeReconcile(w.deps, w.tenantId, pool.id);
    for (const job of await reconcileJobs(pool.id)) await job.remove();
    expect(await reconcileJobs(pool.id)).toHaveLength(0);

    expect(await destroySandbox(deps, sandboxId)).toBe('deleted');
    const deadline = Date.now() + 5_000;
    while ((await reconcileJobs(pool.id)).length === 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 25));
    expect(await reconcileJobs(pool.id)).toHaveLength(1);
    // What the worker runs for that job: the replacement is created.
    await reconcilePool(deps, w.tenantId, pool.id);
    expect(await w.db.sandbox.count({ where: { poolId: pool.id, state: 'provisioning' } })).toBe(1);
  });
});
