import { CreateClaimRequest, PoolSpec } from '@cubicle/contract/api';
import { newId, sqlPoolOf } from '@cubicle/db';
import { createQueueConnection } from '@cubicle/queue';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestRedisNamespace } from '../../../test/harness/index.js';
import { applyPool, createClaimWithSecrets, createResources } from '../src/index.js';
import { decideClaim } from '../src/lifecycle/claim-batch.js';
import { decodeRunEventBatch, runEventsChannel } from '../src/runs/run-channels.js';
import { commitRunEvents } from '../src/runs/run-event-committer.js';
import { seedWarm, world, type World } from './setup.js';

// Two control planes in one process (the API tests start several apps on one database) each own
// their group commits: what one batches never waits on, rides with, or is announced by the other.
describe('resources: devices belong to one control plane (real Postgres and Redis)', () => {
  let w: World;
  const connections: Redis[] = [];
  let claimId: string;

  beforeAll(async () => {
    w = await world();
    const { pool } = await applyPool(w.deps, w.tenantId, 'res', PoolSpec.parse({ image: 'img' }));
    await seedWarm(w.db, w.tenantId, pool.id, 1);
    const claim = await createClaimWithSecrets(
      w.deps,
      w.tenantId,
      'res',
      CreateClaimRequest.parse({ wait_seconds: 0 }),
    );
    claimId = claim.claim.id;
  });
  afterAll(async () => {
    for (const c of connections) c.disconnect();
    await w?.close();
  });

  const redisOf = () => {
    const ns = createTestRedisNamespace();
    const redis = createQueueConnection(ns.url);
    connections.push(redis);
    return { redis, prefix: ns.bullPrefix };
  };

  it('claims through two control planes on one database go in statements of their own', async () => {
    const other = createResources({ ...w.deps });
    const item = () => ({
      claimId: newId('claim'),
      tenantId: w.tenantId,
      poolName: 'res',
      name: `res-${newId('claim').slice(-8)}`,
      named: true,
      metadata: {},
      ttlSeconds: null,
      now: new Date(),
    });
    // Each batch statement checks one connection out of the database's pool.
    const pool = sqlPoolOf(w.db);
    let checkouts = 0;
    const count = () => checkouts++;
    pool.on('acquire', count);
    try {
      const outcomes = await Promise.all([decideClaim(w.deps, item()), decideClaim(other, item())]);
      expect(outcomes.map((o) => o.kind)).toEqual(['pending', 'pending']);
    } finally {
      pool.off('acquire', count);
    }
    expect(checkouts).toBe(2);
  });

  it('run events are announced under the prefix of the control plane that committed them', async () => {
    const [a, b] = [redisOf(), redisOf()];
    const planeA = createResources({ ...w.deps, ...a });
    const planeB = createResources({ ...w.deps, ...b });
    const [runA, runB] = [newId('run'), newId('run')];
    await w.db.run.createMany({
      data: [runA, runB].map((id) => ({
        id,
        tenantId: w.tenantId,
        claimId,
        argv: ['x'],
        timeoutSeconds: 60,
      })),
    });
    const listener = createQueueConnection(createTestRedisNamespace().url);
    connections.push(listener);
    const heard = new Promise<string>((resolve) =>
      listener.on('message', (channel, message) => {
        const [event] = decodeRunEventBatch(message);
        resolve(`${channel} ${event?.data && JSON.stringify(event.data)}`);
      }),
    );
    await listener.subscribe(runEventsChannel(b.prefix, runB));
    // A commits first, on the same database: B's batch must still go out on B's Redis and prefix.
    await commitRunEvents(planeA, runA, [{ type: 'stdout', data: { text: 'from a' } }]);
    await commitRunEvents(planeB, runB, [{ type: 'stdout', data: { text: 'from b' } }]);
    const outcome = await Promise.race([
      heard,
      new Promise<string>((resolve) => setTimeout(() => resolve('nothing heard'), 2000)),
    ]);
    expect(outcome).toBe(`${runEventsChannel(b.prefix, runB)} {"text":"from b"}`);
  });
});
