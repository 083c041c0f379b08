import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '@cubicle/api';
import { newKeyringSpec, objectStoreOf, parseKeyring } from '@cubicle/control-plane';
import { createDb, type Db } from '@cubicle/db';
import { createQueueConnection, JobQueues } from '@cubicle/queue';
import { createApiKey, createTenant } from '@cubicle/tenancy';
import { generateViewerKeySet, parseViewerKeys } from '@cubicle/viewer';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import {
  createTestDatabase,
  createTestRedisNamespace,
  harnessS3,
  redisOptionsFromUrl,
} from '../../harness/index.js';
import { startE2eBackend, type E2eBackend, type E2eBackendKind } from './sandbox-backend.js';
import { startWorker, type WorkerProcess } from './worker-process.js';

export interface Stack {
  db: Db;
  api: FastifyInstance;
  worker: WorkerProcess;
  workerEnv: Record<string, string> & { DATABASE_URL: string };
  /** The backend the worker drives (local unless startStack was asked for another). */
  backend: E2eBackend;
  /** The object store the API and the worker share (fs in a temp dir unless asked for s3). */
  objectStore: {
    kind: 'fs' | 's3';
    /** The variables the worker was given for it (CUBICLE_OBJECT_STORE…). */
    env: Record<string, string>;
    /** The fs store's directory (unused with s3). */
    dir: string;
    store: ReturnType<typeof objectStoreOf>;
  };
  /** Bearer header of the first tenant's admin key. */
  auth: { authorization: string };
  tenantId: string;
  /** A second tenant, for isolation checks. */
  other: { tenantId: string; auth: { authorization: string } };
  restartApi(): Promise<void>;
  restartWorker(opts?: { crash?: boolean }): Promise<void>;
  close(): Promise<void>;
}

/**
 * startStack runs the real thing for one test file: its own database and Redis namespace, the
 * API in this process (Fastify inject), the built worker as a child process with the local
 * backend (real desktops), and two tenants with admin keys.
 */
export async function startStack(
  options: {
    backend?: E2eBackendKind;
    /** A backend the suite brings itself (the real node's, test/e2e/real-node). */
    customBackend?: (databaseUrl: string) => Promise<E2eBackend>;
    /** `fs` (default: a temp dir) or `s3` (the harness's S3-compatible server). */
    objectStore?: 'fs' | 's3';
  } = {},
): Promise<Stack> {
  const database = await createTestDatabase();
  const backend = options.customBackend
    ? await options.customBackend(database.url)
    : await startE2eBackend(options.backend ?? 'local', database.url);
  const ns = createTestRedisNamespace();
  const db = createDb({ databaseUrl: database.url, maxConnections: 20 });
  const redis = new Redis({ ...redisOptionsFromUrl(ns.url), maxRetriesPerRequest: null });
  const queueConnection = createQueueConnection(ns.url);
  const queues = new JobQueues(queueConnection, ns.bullPrefix);
  const objectsDir = mkdtempSync(join(tmpdir(), 'cubicle-e2e-objects-'));
  // The worker reads the same variables (env.ts), so both processes name one store.
  const objectEnv: Record<string, string> =
    options.objectStore === 's3'
      ? (({ endpoint, region, bucket, accessKeyId, secretAccessKey }) => ({
          CUBICLE_OBJECT_STORE: 's3',
          CUBICLE_S3_ENDPOINT: endpoint,
          CUBICLE_S3_REGION: region,
          CUBICLE_S3_BUCKET: bucket,
          CUBICLE_S3_ACCESS_KEY_ID: accessKeyId,
          CUBICLE_S3_SECRET_ACCESS_KEY: secretAccessKey,
        }))(harnessS3())
      : { CUBICLE_OBJECT_STORE: 'fs', CUBICLE_OBJECT_STORE_DIR: objectsDir };
  const parsedObjectEnv = {
    CUBICLE_OBJECT_STORE: objectEnv.CUBICLE_OBJECT_STORE as 'fs' | 's3',
    CUBICLE_OBJECT_STORE_DIR: objectsDir,
    CUBICLE_S3_ENDPOINT: objectEnv.CUBICLE_S3_ENDPOINT,
    CUBICLE_S3_REGION: objectEnv.CUBICLE_S3_REGION ?? 'us-east-1',
    CUBICLE_S3_BUCKET: objectEnv.CUBICLE_S3_BUCKET,
    CUBICLE_S3_ACCESS_KEY_ID: objectEnv.CUBICLE_S3_ACCESS_KEY_ID,
    CUBICLE_S3_SECRET_ACCESS_KEY: objectEnv.CUBICLE_S3_SECRET_ACCESS_KEY,
    CUBICLE_S3_FORCE_PATH_STYLE: true,
  };
  const objectStore = objectStoreOf(parsedObjectEnv);
  const workerEnv = {
    DATABASE_URL: database.url,
    REDIS_URL: ns.url,
    QUEUE_PREFIX: ns.bullPrefix,
    CUBICLE_KEYRING: newKeyringSpec(),
    CUBICLE_BACKENDS: 'local',
    RECLAIM_INTERVAL_MS: '200',
    SWEEP_INTERVAL_MS: '2000',
    CUBICLE_WEBHOOKS_ALLOW_PRIVATE: '1',
    WEBHOOK_RETRY_BASE_MS: '200',
    WEBHOOK_RELAY_INTERVAL_MS: '200',
    ...objectEnv,
    ...backend.workerEnv,
  };
  // One signing key for the stack's life: tickets survive restartApi(), as with a configured key.
  const viewerKeys = parseViewerKeys(generateViewerKeySet('e2e'));
  const build = () =>
    buildApp({
      db,
      redis,
      queues,
      queuePrefix: ns.bullPrefix,
      keyVerifier: { cacheTtlMs: 0 },
      viewer: { keys: viewerKeys, webUrl: 'http://127.0.0.1:3000' },
      // The worker's keyring: the API seals secrets that the worker opens.
      keyring: parseKeyring(workerEnv.CUBICLE_KEYRING),
      // Webhook receivers in the suites listen on loopback (an operator's opt-in, as here).
      webhooks: { allowPrivate: true },
      objectStore,
    });
  let api = await build();
  let worker = startWorker(workerEnv);

  const tenant = await createTenant(db, { name: 'acme' });
  const key = await createApiKey(db, { tenantId: tenant.id, name: 'e2e', role: 'admin' });
  const other = await createTenant(db, { name: 'other' });
  const otherKey = await createApiKey(db, { tenantId: other.id, name: 'e2e', role: 'admin' });

  const stack: Stack = {
    db,
    get api() {
      return api;
    },
    get worker() {
      return worker;
    },
    workerEnv,
    backend,
    objectStore: {
      kind: parsedObjectEnv.CUBICLE_OBJECT_STORE,
      env: objectEnv,
      dir: objectsDir,
      store: objectStore,
    },
    auth: { authorization: `Bearer ${key.key}` },
    tenantId: tenant.id,
    other: { tenantId: other.id, auth: { authorization: `Bearer ${otherKey.key}` } },
    async restartApi() {
      await api.close();
      api = await build();
    },
    async restartWorker(opts = {}) {
      if (opts.crash) await worker.kill9();
      else await worker.stop();
      worker = startWorker(workerEnv);
    },
    async close() {
      // Release everything so the worker destroys every desktop before it stops.
      await db.claim.updateMany({
        where: { status: { not: 'released' } },
        data: { status: 'released', releasedAt: new Date(), releaseReason: 'pool_deleted' },
      });
      await db.pool.updateMany({
        where: { deletedAt: null },
        data: { state: 'draining', deletedAt: new Date() },
      });
      await db.sandbox.updateMany({
        where: { state: { in: ['warm', 'claimed', 'provisioning'] } },
        data: { state: 'releasing' },
      });
      const pools = await db.pool.findMany({ select: { id: true, tenantId: true } });
      for (const p of pools)
        await queues.enqueue('pool.reconcile', { tenant_id: p.tenantId, pool_id: p.id });
      await waitFor(
        async () => (await db.sandbox.count({ where: { state: { notIn: ['deleted'] } } })) === 0,
        120_000,
      ).catch(() => undefined);
      await worker.stop();
      await backend.close();
      await api.close();
      await queues.close();
      queueConnection.disconnect();
      redis.disconnect();
      await db.$disconnect();
      await ns.cleanup();
      await database.drop();
      rmSync(objectsDir, { recursive: true, force: true });
    },
  };
  return stack;
}

/** waitFor polls a condition until it holds or the bound passes (then it throws). */
export async function waitFor(
  check: () => Promise<boolean>,
  timeoutMs: number,
  intervalMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
