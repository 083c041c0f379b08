import { CreateClaimRequest, PoolSpec } from '@cubicle/contract/api';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyPool, createClaim } from '../src/index.js';
import { egressChannel } from '../src/egress/egress-changes.js';
import { seedWarm, world, type World } from './setup.js';

describe('a claim tells egress points only about sandboxes they serve', () => {
  let w: World;
  beforeAll(async () => {
    w = await world();
  });
  afterAll(async () => w?.close());

  it('publishes the claimed sandbox when it has (or may have) a link, never when it has none', async () => {
    const { pool } = await applyPool(
      w.deps,
      w.tenantId,
      'links',
      PoolSpec.parse({ image: 'img', autoscaling: { min: 0, initial: 0, max: 3 } }),
    );
    // Claimed oldest first: unlinked, then linked, then a backend that does not say (null).
    const [unlinked] = await seedWarm(w.db, w.tenantId, pool.id, 1);
    const [linked] = await seedWarm(w.db, w.tenantId, pool.id, 1);
    const [unsaid] = await seedWarm(w.db, w.tenantId, pool.id, 1);
    await w.db.sandbox.update({ where: { id: unlinked! }, data: { egressLink: false } });
    await w.db.sandbox.update({ where: { id: linked! }, data: { egressLink: true } });

    // world()'s connection is an ioredis client (createQueueConnection).
    const subscriber = (w.deps.redis as Redis).duplicate();
    const heard: string[] = [];
    subscriber.on('message', (_channel: string, message: string) => {
      heard.push((JSON.parse(message) as { sandbox_id: string }).sandbox_id);
    });
    await subscriber.subscribe(egressChannel(w.deps.prefix));
    try {
      const taken: string[] = [];
      for (let i = 0; i < 3; i++) {
        const { claim } = await createClaim(
          w.deps,
          w.tenantId,
          'links',
          CreateClaimRequest.parse({ wait_seconds: 0 }),
        );
        taken.push(claim.sandbox!.id);
      }
      expect(taken).toEqual([unlinked, linked, unsaid]);
      // Published in claim order: once the last one arrived, an earlier one would have too.
      await expect.poll(() => heard.length).toBe(2);
      expect(heard).toEqual([linked, unsaid]);
    } finally {
      subscriber.disconnect();
    }
  });
});
