import { PoolSpec } from '@cubicle/contract/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyPool, getPool } from '../src/index.js';
import { world, type World } from './setup.js';

/** A pool's `kubernetes` placement is stored, shown, part of the template, and idempotent. */
describe('pool kubernetes placement', () => {
  let w: World;
  beforeAll(async () => {
    w = await world();
  });
  afterAll(async () => w?.close());

  const placement = {
    runtime_class_name: 'gvisor',
    node_selector: { 'cubicle.dev/desktops': 'true', zone: 'a' },
    tolerations: [{ key: 'desktops', operator: 'Exists' as const, effect: 'NoSchedule' as const }],
  };

  it('round-trips, and the same spec again changes nothing (JSONB key order aside)', async () => {
    const spec = PoolSpec.parse({ image: 'img', backend: 'kubernetes', kubernetes: placement });
    const first = await applyPool(w.deps, w.tenantId, 'placed', spec);
    expect(first.created).toBe(true);
    expect(first.pool.kubernetes).toEqual({
      ...placement,
      tolerations: [{ key: 'desktops', operator: 'Exists', effect: 'NoSchedule' }],
    });
    const again = await applyPool(w.deps, w.tenantId, 'placed', spec);
    expect(again.pool.generation).toBe(1);
    expect(again.pool.updated_at).toBe(first.pool.updated_at);
    expect((await getPool(w.deps, w.tenantId, 'placed')).kubernetes).toEqual(first.pool.kubernetes);
  });

  it('a placement change rolls the template; dropping it shows null', async () => {
    const changed = await applyPool(
      w.deps,
      w.tenantId,
      'placed',
      PoolSpec.parse({
        image: 'img',
        backend: 'kubernetes',
        kubernetes: { ...placement, runtime_class_name: 'kata' },
      }),
    );
    expect(changed.pool.generation).toBe(2);
    const dropped = await applyPool(
      w.deps,
      w.tenantId,
      'placed',
      PoolSpec.parse({ image: 'img', backend: 'kubernetes' }),
    );
    expect(dropped.pool.kubernetes).toBeNull();
    expect(dropped.pool.generation).toBe(3);
    const plain = await applyPool(w.deps, w.tenantId, 'plain', PoolSpec.parse({ image: 'img' }));
    expect(plain.pool.kubernetes).toBeNull();
  });
});
