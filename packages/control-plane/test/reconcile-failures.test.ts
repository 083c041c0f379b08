import { PoolSpec } from '@cubicle/contract/api';
import { newId } from '@cubicle/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  applyPool,
  newKeyringSpec,
  parseKeyring,
  reconcilePool,
  type WorkerDeps,
} from '../src/index.js';
import { world, type World } from './setup.js';

/**
 * The bad-image pause counts only the image's own failures (issue 11 §8): sandboxes the control
 * plane lost track of (its provisioning timeout, a desktop lost behind its back) do not stop a
 * pool from refilling. Real Postgres and BullMQ.
 */
describe('reconcile after failures', () => {
  let w: World;
  let deps: WorkerDeps;
  beforeAll(async () => {
    w = await world();
    deps = { ...w.deps, backends: {}, keyring: parseKeyring(newKeyringSpec()) };
  });
  afterAll(async () => w?.close());

  const failed = async (poolId: string, reasons: string[]) =>
    w.db.sandbox.createMany({
      data: reasons.map((failureReason) => ({
        id: newId('sandbox'),
        tenantId: w.tenantId,
        poolId,
        backend: 'local' as const,
        image: 'a',
        generation: 1,
        state: 'failed' as const,
        failureReason,
        endedAt: new Date(),
      })),
    });

  it('refills a pool whose recent failures are the control plane’s own', async () => {
    const { pool } = await applyPool(
      w.deps,
      w.tenantId,
      'lost',
      PoolSpec.parse({ image: 'a', autoscaling: { min: 0, initial: 2, max: 4 } }),
    );
    await failed(pool.id, [
      'provisioning timed out',
      'provisioning timed out',
      'lost by the backend',
      'lost by the backend',
    ]);
    expect((await reconcilePool(deps, w.tenantId, pool.id)).created).toBe(2);
  });

  it('pauses a pool whose image failed three times', async () => {
    const { pool } = await applyPool(
      w.deps,
      w.tenantId,
      'bad',
      PoolSpec.parse({ image: 'a', autoscaling: { min: 0, initial: 2, max: 4 } }),
    );
    await failed(pool.id, Array(3).fill('the desktop did not start: Xvfb exited 1'));
    expect((await reconcilePool(deps, w.tenantId, pool.id)).created).toBe(0);
  });
});
