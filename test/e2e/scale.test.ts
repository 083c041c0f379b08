import { buildApp } from '@cubicle/api';
import { startHollowGuests, type HollowGuests } from '@cubicle/backends';
import { newKeyringSpec, parseKeyring, type GuestCalls } from '@cubicle/control-plane';
import { createDb, type Db } from '@cubicle/db';
import { createQueueConnection, JobQueues } from '@cubicle/queue';
import { createApiKey, createTenant } from '@cubicle/tenancy';
import { generateViewerKeySet, parseViewerKeys } from '@cubicle/viewer';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestDatabase,
  createTestRedisNamespace,
  redisOptionsFromUrl,
} from '../harness/index.js';
import { waitFor } from './support/stack.js';
import { startWorker, type WorkerProcess } from './support/worker-process.js';

const CYCLES = 1_000;
const PARALLEL = 16;

/**
 * The control plane at scale on hollow sandboxes (one process answering the guest protocol for
 * all of them): two API instances (each with its own Redis connections and guest-call client)
 * and two worker processes share one Postgres and one Redis. 1,000 sandboxes go through claim →
 * guest call → release, spread over both APIs, then every per-sandbox map in the APIs and the
 * workers is empty and each worker holds the same few Redis connections it started with. A
 * claim burst over both APIs gives no sandbox twice.
 */
describe('scale: two APIs and two workers on hollow sandboxes', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  const ns = createTestRedisNamespace();
  let db: Db;
  let hollow: HollowGuests;
  const apis: FastifyInstance[] = [];
  const closers: (() => Promise<unknown> | void)[] = [];
  const workers: WorkerProcess[] = [];
  const metricsPorts = [20_000 + Math.floor(Math.random() * 20_000)];
  metricsPorts.push(metricsPorts[0]! + 1);
  let admin: Redis;
  let auth: { authorization: string };

  const call = (i: number, method: string, url: string, payload?: unknown) =>
    apis[i % apis.length]!.inject({
      method: method as 'GET',
      url,
      ...(payload === undefined ? {} : { payload: payload as object }),
      headers: auth,
    });
  /** Redis clients of one worker process, by the name its connections carry. */
  const clientsOf = async (name: string) =>
    ((await admin.client('LIST')) as string)
      .split('\n')
      .filter((l) => / name=(\S*)/.exec(l)?.[1]?.includes(name)).length;
  const workerEntries = async (port: number) => {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    return [...text.matchAll(/^cubicle_worker_per_sandbox_entries\{map="(\w+)"\} (\d+)/gm)].map(
      (m) => [m[1], Number(m[2])] as const,
    );
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    db = createDb({ databaseUrl: database.url, maxConnections: 20 });
    hollow = await startHollowGuests({ delayMs: 2 });
    admin = new Redis({ ...redisOptionsFromUrl(ns.url), maxRetriesPerRequest: null });
    const keyring = newKeyringSpec();
    const env = {
      DATABASE_URL: database.url,
      QUEUE_PREFIX: ns.bullPrefix,
      CUBICLE_KEYRING: keyring,
      CUBICLE_BACKENDS: 'local',
      HOLLOW_GUESTS: `${hollow.url}#${hollow.adminToken}`,
      RECLAIM_INTERVAL_MS: '500',
      SWEEP_INTERVAL_MS: '2000',
      PROVISION_CONCURRENCY: '16',
      WORKER_CONCURRENCY: '16',
    };
    for (const [i, port] of metricsPorts.entries()) {
      workers.push(
        startWorker({
          ...env,
          REDIS_URL: redisUrlNamed(ns.url, `scale-w${i}`),
          WORKER_METRICS_PORT: String(port),
        }),
      );
    }
    for (let i = 0; i < 2; i++) {
      const redis = new Redis({ ...redisOptionsFromUrl(ns.url), maxRetriesPerRequest: null });
      const queueConnection = createQueueConnection(ns.url);
      const queues = new JobQueues(queueConnection, ns.bullPrefix);
      apis.push(
        await buildApp({
          db,
          redis,
          queues,
          queuePrefix: ns.bullPrefix,
          keyVerifier: { cacheTtlMs: 60_000 },
          keyring: parseKeyring(keyring),
          viewer: {
            keys: parseViewerKeys(generateViewerKeySet('scale')),
            webUrl: 'http://127.0.0.1:3000',
          },
        }),
      );
      closers.push(async () => {
        await queues.close();
        queueConnection.disconnect();
        redis.disconnect();
      });
    }
    const tenant = await createTenant(db, {
      name: 'scale',
      quotas: {
        max_sandboxes: 5_000,
        max_concurrent_claims: 5_000,
        requests_per_minute: 1_000_000,
      },
    });
    const key = await createApiKey(db, { tenantId: tenant.id, name: 'scale', role: 'admin' });
    auth = { authorization: `Bearer ${key.key}` };
    const pool = await call(0, 'PUT', '/v1/pools/hollow', {
      image: 'hollow',
      autoscaling: { min: 100, initial: 100, max: 1000 },
    });
    expect(pool.statusCode).toBeLessThan(300);
    await waitFor(
      async () => (await call(0, 'GET', '/v1/pools/hollow')).json().counts.warm >= 100,
      120_000,
      250,
    );
  }, 180_000);

  afterAll(async () => {
    await Promise.all(apis.map((a) => a.close()));
    for (const c of closers) await c();
    await Promise.all(workers.map((w) => w.stop()));
    admin?.disconnect();
    await hollow?.close();
    await db?.$disconnect();
    await ns.cleanup();
    await database?.drop();
  });

  it('drives 1,000 sandboxes through claim → call → release over both APIs, leaving no per-sandbox memory', async () => {
    const connectionsBefore = await Promise.all(['scale-w0', 'scale-w1'].map(clientsOf));
    const sandboxes = new Set<string>();
    let next = 0;
    const loop = async (lane: number) => {
      while (next < CYCLES) {
        const n = next++;
        const claim = await call(n, 'POST', '/v1/pools/hollow/claims', {
          ttl_seconds: 600,
          wait_seconds: 30,
        });
        expect(claim.statusCode, claim.body).toBe(201);
        const { id, sandbox } = claim.json() as { id: string; sandbox: { id: string } };
        sandboxes.add(sandbox.id);
        // The call goes through the other API than the claim: any API serves any claim.
        const shell = await call(n + 1, 'POST', `/v1/claims/${id}/shell`, { argv: ['true'] });
        expect(shell.statusCode, shell.body).toBe(200);
        expect(shell.json()).toMatchObject({ exit_code: 0 });
        expect((await call(n, 'DELETE', `/v1/claims/${id}`)).statusCode).toBe(200);
      }
      void lane;
    };
    await Promise.all(Array.from({ length: PARALLEL }, (_, i) => loop(i)));
    expect(sandboxes.size).toBe(CYCLES); // every cycle had a sandbox of its own

    // The drive routes plugin decorates each API with its guest-call client. Its claim routes are
    // forgotten by the claim-end broadcast (a message in flight may still be arriving).
    const guestStats = () =>
      apis.map((api) => (api as unknown as { guestCalls: GuestCalls }).guestCalls.stats());
    const noneHeld = { waiters: 0, claimChains: 0, claimRoutes: 0 };
    await waitFor(
      async () => guestStats().every((s) => JSON.stringify(s) === JSON.stringify(noneHeld)),
      10_000,
      100,
    ).catch(() => undefined);
    for (const stats of guestStats()) expect(stats).toEqual(noneHeld);
    // Workers: nothing running, no mirrored claims (hollow sandboxes are not mirrored), and no
    // claim remembered as having its secrets delivered: the claim-end broadcast forgets it (a
    // message in flight may still be arriving, hence the short wait).
    const allEmpty = { running: 0, mirrored: 0, secretsDelivered: 0 };
    const entriesOfAll = () =>
      Promise.all(metricsPorts.map(async (p) => Object.fromEntries(await workerEntries(p))));
    await waitFor(
      async () =>
        (await entriesOfAll()).every((e) => JSON.stringify(e) === JSON.stringify(allEmpty)),
      10_000,
      100,
    ).catch(() => undefined);
    for (const entries of await entriesOfAll()) expect(entries).toEqual(allEmpty);
    // Not vacuous: a live claim holding a secret has it delivered before its first call, which
    // the worker that ran the call remembers, and its release forgets it again.
    const live = await call(0, 'POST', '/v1/pools/hollow/claims', {
      ttl_seconds: 600,
      wait_seconds: 30,
      secrets: { SCALE_TOKEN: 'scale-secret-value' },
    });
    expect(live.statusCode, live.body).toBe(201);
    const liveId = (live.json() as { id: string }).id;
    expect(
      (await call(1, 'POST', `/v1/claims/${liveId}/shell`, { argv: ['true'] })).statusCode,
    ).toBe(200);
    const delivered = (await entriesOfAll()).map((e) => e.secretsDelivered ?? 0);
    expect(delivered.reduce((a, b) => a + b, 0)).toBe(1);
    // …and the API that made the claim and the one that routed the call remember its lane until
    // the claim ends.
    expect(guestStats().map((s) => s.claimRoutes)).toEqual([1, 1]);
    expect((await call(0, 'DELETE', `/v1/claims/${liveId}`)).statusCode).toBe(200);
    await waitFor(
      async () => (await entriesOfAll()).every((e) => e.secretsDelivered === 0),
      10_000,
      50,
    );
    await waitFor(async () => guestStats().every((s) => s.claimRoutes === 0), 10_000, 50);
    expect(await admin.hlen(`${ns.bullPrefix}:lanes:active`)).toBe(0);
    const connectionsAfter = await Promise.all(['scale-w0', 'scale-w1'].map(clientsOf));
    expect(connectionsAfter).toEqual(connectionsBefore);
    // Named connections were found (the check is not vacuous) and stay few: BullMQ workers of the
    // fixed queues, subscribers, the shared connection and the lanes' blocking one.
    for (const n of connectionsAfter) {
      expect(n).toBeGreaterThan(2);
      expect(n).toBeLessThanOrEqual(16);
    }
    console.log(
      `worker redis connections before/after 1,000 sandboxes: ${connectionsBefore} / ${connectionsAfter}`,
    );
  }, 600_000);

  it('a claim burst spread over both APIs hands out no sandbox twice', async () => {
    await waitFor(
      async () => (await call(0, 'GET', '/v1/pools/hollow')).json().counts.warm >= 100,
      120_000,
      250,
    );
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        call(i, 'POST', '/v1/pools/hollow/claims', { ttl_seconds: 600 }),
      ),
    );
    const active = answers
      .filter((a) => a.statusCode === 201)
      .map((a) => a.json() as { sandbox: { id: string } | null });
    const ids = active.map((c) => c.sandbox?.id).filter(Boolean);
    expect(ids.length).toBeGreaterThan(50);
    expect(new Set(ids).size).toBe(ids.length);
    const live = await db.claim.groupBy({
      by: ['sandboxId'],
      where: { status: 'active' },
      _count: true,
    });
    expect(live.filter((g) => g._count > 1)).toEqual([]);
  }, 180_000);
});

/** redisUrlNamed names a Redis URL's connections (`?name=`, see redisOptionsFromUrl). */
function redisUrlNamed(url: string, name: string): string {
  const u = new URL(url);
  u.searchParams.set('name', name);
  return u.toString();
}
