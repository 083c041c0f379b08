// The whole API as `npm start` wires it (database, Redis, job queues, viewer tickets) on this
// file's own database and Redis namespace, with two tenants and claims on sandboxes seeded as
// warm: the hardening suites (served contract, hostile input, fuzz, metrics) drive it with inject.
import { randomBytes } from 'node:crypto';
import { parseKeyring } from '@cubicle/control-plane';
import { createDb, newId, type Db } from '@cubicle/db';
import { createQueueConnection, JobQueues } from '@cubicle/queue';
import { createApiKey, createTenant } from '@cubicle/tenancy';
import { generateViewerKeySet, parseViewerKeys } from '@cubicle/viewer';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { createTestDatabase, createTestRedisNamespace } from '../../../test/harness/index.js';
import { buildApp, type BuildOptions } from '../src/app.js';

export interface FullTenant {
  id: string;
  /** `Bearer <key>` of an admin and of a member key. */
  admin: string;
  member: string;
}

export interface FullAppFixture {
  app: FastifyInstance;
  db: Db;
  a: FullTenant;
  b: FullTenant;
  /** claim makes a claim of tenant A on pool `pool` through the API (active: a warm sandbox is seeded). */
  claim(pool: string, body?: Record<string, unknown>): Promise<{ id: string; name: string }>;
  /** pool applies a pool of tenant A with no warm sandboxes. */
  pool(name: string): Promise<string>;
  close(): Promise<void>;
}

export async function fullAppFixture(options: Partial<BuildOptions> = {}): Promise<FullAppFixture> {
  const database = await createTestDatabase();
  const ns = createTestRedisNamespace();
  const db = createDb({ databaseUrl: database.url, maxConnections: 8 });
  const connection: Redis = createQueueConnection(ns.url);
  const queues = new JobQueues(connection, ns.bullPrefix);
  const app = await buildApp({
    db,
    redis: connection,
    queues,
    queuePrefix: ns.bullPrefix,
    viewer: { keys: parseViewerKeys(generateViewerKeySet('test')), webUrl: 'https://v.test' },
    // Secrets and webhooks are served only with a keyring, as main.ts does with CUBICLE_KEYRING.
    keyring: parseKeyring(`test:${randomBytes(32).toString('base64')}`),
    ...options,
  });
  const tenant = async (name: string): Promise<FullTenant> => {
    // Suites send thousands of requests: the rate limit is not what they test.
    const t = await createTenant(db, {
      name,
      quotas: { requests_per_minute: 1_000_000, max_pools: 1000, max_concurrent_claims: 10_000 },
    });
    const key = async (role: 'admin' | 'member') =>
      `Bearer ${(await createApiKey(db, { tenantId: t.id, name: role, role })).key}`;
    return { id: t.id, admin: await key('admin'), member: await key('member') };
  };
  const a = await tenant('A');
  const b = await tenant('B');
  const pools = new Map<string, string>();
  const pool = async (name: string) => {
    const known = pools.get(name);
    if (known) return known;
    const put = await app.inject({
      method: 'PUT',
      url: `/v1/pools/${name}`,
      headers: { authorization: a.admin },
      payload: { image: 'img', autoscaling: { min: 0, initial: 0, max: 1000 } },
    });
    if (put.statusCode !== 201) throw new Error(`pool ${name}: ${put.statusCode} ${put.body}`);
    const id = put.json().id as string;
    pools.set(name, id);
    return id;
  };
  return {
    app,
    db,
    a,
    b,
    pool,
    async claim(poolName, body = {}) {
      const poolId = await pool(poolName);
      await db.sandbox.create({
        data: {
          id: newId('sandbox'),
          tenantId: a.id,
          poolId,
          backend: 'local',
          image: 'img',
          generation: 1,
          state: 'warm',
          readyAt: new Date(),
        },
      });
      const res = await app.inject({
        method: 'POST',
        url: `/v1/pools/${poolName}/claims`,
        headers: { authorization: a.member },
        payload: { wait_seconds: 0, ...body },
      });
      if (res.statusCode !== 201) throw new Error(`claim: ${res.statusCode} ${res.body}`);
      return { id: res.json().id as string, name: res.json().name as string };
    },
    async close() {
      await app.close();
      await queues.close();
      connection.disconnect();
      await db.$disconnect();
      await ns.cleanup();
      await database.drop();
    },
  };
}
