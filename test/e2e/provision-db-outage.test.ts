import { buildApp } from '@cubicle/api';
import { newKeyringSpec, parseKeyring } from '@cubicle/control-plane';
import { createDb, type Db } from '@cubicle/db';
import { createQueueConnection, JobQueues } from '@cubicle/queue';
import { createApiKey, createTenant } from '@cubicle/tenancy';
import { generateViewerKeySet, parseViewerKeys } from '@cubicle/viewer';
import { Queue } from 'bullmq';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestRedisNamespace, redisOptionsFromUrl } from '../harness/index.js';
import { startPrivatePostgres, type PrivatePostgres } from './support/private-postgres.js';
import { startE2eBackend, type E2eBackend } from './support/sandbox-backend.js';
import { waitFor } from './support/stack.js';
import { startWorker, type WorkerProcess } from './support/worker-process.js';

const OUTAGE_MS = 15_000;

/**
 * A Postgres outage during a refill (issue 11 §8): the provisioning jobs wait for the database
 * without spending attempts, the desktops that started meanwhile are adopted when it returns,
 * and the pool is warm again within 10 s — no sandbox failed, no pause. The database is a
 * private one this file stops and restarts; the worker is the built process with real desktops.
 */
describe('provisioning through a Postgres outage', () => {
  let pg: PrivatePostgres;
  let ns: ReturnType<typeof createTestRedisNamespace>;
  let db: Db;
  let redis: Redis;
  let queueConnection: Redis;
  let queues: JobQueues;
  let api: FastifyInstance;
  let worker: WorkerProcess;
  let backend: E2eBackend;
  let auth: { authorization: string };

  beforeAll(async () => {
    pg = await startPrivatePostgres();
    ns = createTestRedisNamespace();
    backend = await startE2eBackend('local', pg.url);
    db = createDb({ databaseUrl: pg.url, maxConnections: 5 });
    redis = new Redis({ ...redisOptionsFromUrl(ns.url), maxRetriesPerRequest: null });
    queueConnection = createQueueConnection(ns.url);
    queues = new JobQueues(queueConnection, ns.bullPrefix);
    // One keyring for both: the API seals what the worker opens.
    const keyring = newKeyringSpec();
    api = await buildApp({
      db,
      redis,
      queues,
      queuePrefix: ns.bullPrefix,
      keyVerifier: { cacheTtlMs: 0 },
      viewer: {
        keys: parseViewerKeys(generateViewerKeySet('e2e')),
        webUrl: 'http://127.0.0.1:3000',
      },
      keyring: parseKeyring(keyring),
    });
    worker = startWorker({
      DATABASE_URL: pg.url,
      REDIS_URL: ns.url,
      QUEUE_PREFIX: ns.bullPrefix,
      CUBICLE_KEYRING: keyring,
      CUBICLE_BACKENDS: 'local',
      RECLAIM_INTERVAL_MS: '200',
      SWEEP_INTERVAL_MS: '2000',
    });
    const tenant = await createTenant(db, { name: 'outage' });
    const key = await createApiKey(db, { tenantId: tenant.id, name: 'e2e', role: 'admin' });
    auth = { authorization: `Bearer ${key.key}` };
  });

  afterAll(async () => {
    await pg?.start().catch(() => undefined);
    if (db) {
      // Release everything so the worker destroys every desktop before it stops.
      await db.claim.updateMany({
        where: { status: { not: 'released' } },
        data: { status: 'released', releasedAt: new Date(), releaseReason: 'pool_deleted' },
      });
      await db.pool.updateMany({ data: { state: 'draining', deletedAt: new Date() } });
      await db.sandbox.updateMany({
        where: { state: { in: ['warm', 'claimed', 'provisioning'] } },
        data: { state: 'releasing' },
      });
      for (const p of await db.pool.findMany({ select: { id: true, tenantId: true } }))
        await queues.enqueue('pool.reconcile', { tenant_id: p.tenantId, pool_id: p.id });
      await waitFor(
        async () => (await db.sandbox.count({ where: { state: { not: 'deleted' } } })) === 0,
        60_000,
      ).catch(() => undefined);
    }
    await worker?.stop();
    // Whatever a failed run left behind.
    for (const id of (await backend?.liveSandboxIds()) ?? []) await backend.loseSandbox(id);
    await api?.close();
    await queues?.close();
    queueConnection?.disconnect();
    redis?.disconnect();
    await db?.$disconnect();
    await ns?.cleanup();
    await pg?.close();
  });

  it('refills the pool within 10 s of the database coming back after 15 s away', async () => {
    const put = await api.inject({
      method: 'PUT',
      url: '/v1/pools/outage',
      headers: auth,
      payload: { image: 'local', autoscaling: { min: 0, initial: 2, max: 4 } },
    });
    expect(put.statusCode).toBe(201);
    const poolId = put.json().id as string;
    const count = (state: 'provisioning' | 'warm') =>
      db.sandbox.count({ where: { poolId, state } });
    await waitFor(async () => (await count('warm')) === 2, 120_000, 250);

    // Claim both: reconcile starts two replacements — the refill the outage hits.
    for (let i = 0; i < 2; i++) {
      const claim = await api.inject({
        method: 'POST',
        url: '/v1/pools/outage/claims',
        headers: auth,
        payload: { ttl_seconds: 900, wait_seconds: 0 },
      });
      expect(claim.statusCode).toBe(201);
    }
    await waitFor(async () => (await count('provisioning')) === 2, 30_000, 20);
    const refill = (
      await db.sandbox.findMany({ where: { poolId, state: 'provisioning' }, select: { id: true } })
    ).map((s) => s.id);
    // Stop the database once both desktops are starting (their X servers are up): each job has
    // read what it needs by then, and finishes while the database is away. Stopping it earlier
    // parks a job before its desktop starts, which tests a different (and simpler) path.
    await waitFor(
      async () => {
        const starting = await backend.liveSandboxIds();
        return refill.every((id) => starting.has(id));
      },
      30_000,
      50,
    );

    await pg.stop();
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    // The desktops started while the database was away.
    const live = await backend.liveSandboxIds();
    expect(refill.filter((id) => live.has(id))).toHaveLength(2);
    await pg.start();
    const back = Date.now();

    await waitFor(async () => (await count('warm')) === 2, 10_000, 100);
    const refilledMs = Date.now() - back;
    console.log(JSON.stringify({ outage_ms: OUTAGE_MS, warm_again_after_ms: refilledMs }));

    // Adopted, not replaced: the warm ones are the desktops that started during the outage.
    const warm = await db.sandbox.findMany({
      where: { poolId, state: 'warm' },
      select: { id: true },
    });
    expect(warm.map((s) => s.id).sort()).toEqual([...refill].sort());
    expect(await db.sandbox.count({ where: { poolId, state: 'failed' } })).toBe(0);
    // No provisioning attempt was spent on the outage: the one that succeeded is the only one.
    const sandboxes = new Queue('sandboxes', {
      connection: queueConnection,
      prefix: ns.bullPrefix,
    });
    for (const id of refill) {
      const job = await sandboxes.getJob(`provision-${id}`);
      expect(await job?.getState()).toBe('completed');
      expect(job?.attemptsMade).toBe(1);
    }
    await sandboxes.close();
  });
});
