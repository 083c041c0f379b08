import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDb, newId, type Db } from '@cubicle/db';
import { createObjectStore } from '@cubicle/object-store';
import { createQueueConnection, JobQueues } from '@cubicle/queue';
import type { Redis } from 'ioredis';
import { createTestDatabase, createTestRedisNamespace } from '../../../test/harness/index.js';
import { createResources, newKeyringSpec, parseKeyring, type Resources } from '../src/index.js';

export interface World {
  /** The file's control plane: one Resources, as a process makes it. */
  deps: Resources;
  db: Db;
  /** The file's database, for a second client (a second API process). */
  databaseUrl: string;
  queues: JobQueues;
  tenantId: string;
  otherTenantId: string;
  close(): Promise<void>;
}

/** world gives a test file its own database, Redis namespace, real job queues and two tenants. */
export async function world(): Promise<World> {
  const database = await createTestDatabase();
  const ns = createTestRedisNamespace();
  const db = createDb({ databaseUrl: database.url, maxConnections: 20 });
  const connection: Redis = createQueueConnection(ns.url);
  const queues = new JobQueues(connection, ns.bullPrefix);
  const tenantId = newId('tenant');
  const otherTenantId = newId('tenant');
  // The file's object store: files under a private directory (the embedded default's back end).
  const objectsDir = mkdtempSync(join(tmpdir(), 'cubicle-cp-objects-'));
  await db.tenant.createMany({
    data: [
      { id: tenantId, name: 'acme', maxConcurrentClaims: 1000 },
      { id: otherTenantId, name: 'other' },
    ],
  });
  return {
    deps: createResources({
      db,
      queues,
      redis: connection,
      prefix: ns.bullPrefix,
      keyring: parseKeyring(newKeyringSpec()),
      objectStore: createObjectStore({ kind: 'fs', root: objectsDir }),
    }),
    db,
    databaseUrl: database.url,
    queues,
    tenantId,
    otherTenantId,
    async close() {
      await queues.close();
      connection.disconnect();
      await db.$disconnect();
      await ns.cleanup();
      await database.drop();
      rmSync(objectsDir, { recursive: true, force: true });
    },
  };
}

/**
 * seedWarm inserts sandboxes in the warm state, as a finished provisioning leaves them, for
 * tests of the claim transaction itself (the provisioning path has its own suites).
 */
export async function seedWarm(
  db: Db,
  tenantId: string,
  poolId: string,
  count: number,
  generation = 1,
): Promise<string[]> {
  const ids = Array.from({ length: count }, () => newId('sandbox'));
  await db.sandbox.createMany({
    data: ids.map((id) => ({
      id,
      tenantId,
      poolId,
      backend: 'local' as const,
      image: 'img',
      generation,
      state: 'warm' as const,
      readyAt: new Date(),
    })),
  });
  return ids;
}
