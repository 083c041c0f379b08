// Shared setup of the identity suites (auth*, api-keys*, audit*): the real app on this file's
// own database and Redis namespace, and tenants with an admin and a member key.
import { redisOptionsFromUrl } from '@cubicle/config';
import { createDb, type Db } from '@cubicle/db';
import { createQueueConnection, JobQueues } from '@cubicle/queue';
import { createApiKey, createTenant, type TenantQuotas } from '@cubicle/tenancy';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { buildApp, type BuildOptions } from '../src/app.js';
import { testAppOptions } from './app-options.js';
import { createTestDatabase, createTestRedisNamespace } from '../../../test/harness/index.js';

export interface TestTenant {
  id: string;
  admin: { id: string; key: string; prefix: string };
  member: { id: string; key: string; prefix: string };
}

export interface IdentityFixture {
  db: Db;
  redis: Redis;
  databaseUrl: string;
  /** build makes an app on the fixture's db and Redis; close it (or let `close()` do it). */
  build(options?: Partial<BuildOptions>): Promise<FastifyInstance>;
  tenant(name: string, quotas?: Partial<TenantQuotas>): Promise<TestTenant>;
  close(): Promise<void>;
}

export async function identityFixture(): Promise<IdentityFixture> {
  const database = await createTestDatabase();
  const ns = createTestRedisNamespace();
  const db = createDb({ databaseUrl: database.url, maxConnections: 4 });
  const redis = new Redis({
    ...redisOptionsFromUrl(ns.url),
    keyPrefix: ns.prefix,
    lazyConnect: true,
  });
  await redis.connect();
  // BullMQ refuses a keyPrefix: the queues get a connection of their own.
  const queueConnection = createQueueConnection(ns.url);
  const queues = new JobQueues(queueConnection, ns.bullPrefix);
  const apps: FastifyInstance[] = [];
  return {
    db,
    redis,
    databaseUrl: database.url,
    async build(options = {}) {
      const app = await buildApp({
        db,
        redis,
        queues,
        ...testAppOptions(ns.bullPrefix),
        ...options,
      });
      apps.push(app);
      return app;
    },
    async tenant(name, quotas) {
      const t = await createTenant(db, { name, ...(quotas ? { quotas } : {}) });
      const admin = await createApiKey(db, { tenantId: t.id, name: 'admin', role: 'admin' });
      const member = await createApiKey(db, { tenantId: t.id, name: 'member', role: 'member' });
      return { id: t.id, admin, member };
    },
    async close() {
      for (const app of apps) await app.close();
      await queues.close();
      queueConnection.disconnect();
      redis.disconnect();
      await db.$disconnect();
      await ns.cleanup();
      await database.drop();
    },
  };
}

/** bearer builds the Authorization header of a key. */
export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
