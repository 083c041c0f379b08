// Shared setup of the viewer suites: the real app (twice, as two replicas would run) on this
// file's own database and Redis namespace, a tenant with admin and member keys, another tenant,
// and claims made through the API on sandboxes seeded as warm (no desktops needed here).
import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import {
  createResources,
  newKeyringSpec,
  parseKeyring,
  seal,
  type Deps,
} from '@cubicle/control-plane';
import { createDb, newId, type Db } from '@cubicle/db';
import { createQueueConnection, JobQueues } from '@cubicle/queue';
import { createApiKey, createTenant } from '@cubicle/tenancy';
import { generateViewerKeySet, parseViewerKeys, type ViewerKeys } from '@cubicle/viewer';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { createTestDatabase, createTestRedisNamespace } from '../../../test/harness/index.js';
import { buildApp } from '../src/app.js';

export const WEB_URL = 'https://viewer.example.test';

export interface ViewerFixture {
  db: Db;
  /** Two API instances on the same database and Redis (two replicas). */
  apps: [FastifyInstance, FastifyInstance];
  /** Base URLs of the two listening instances (http://127.0.0.1:port). */
  urls: [string, string];
  a: { tenantId: string; admin: string; member: string };
  b: { tenantId: string; admin: string };
  /**
   * claim makes an active claim of tenant A on a seeded warm sandbox whose VNC is `vnc` (and
   * whose sealed guest token is `guestToken`, when given).
   */
  claim(vncEndpoint: string | null, guestToken?: string): Promise<string>;
  /** The connections both replicas share, for another app on them. */
  connections: { db: Db; redis: Redis; queues: JobQueues; queuePrefix: string };
  /** The signing keys both replicas share. */
  keys: ViewerKeys;
  /** Control-plane deps as the worker builds them (its reclaim publishes claim ends). */
  workerDeps: Deps;
  close(): Promise<void>;
}

export async function viewerFixture(): Promise<ViewerFixture> {
  const database = await createTestDatabase();
  const ns = createTestRedisNamespace();
  const db = createDb({ databaseUrl: database.url, maxConnections: 8 });
  const connection: Redis = createQueueConnection(ns.url);
  const queues = new JobQueues(connection, ns.bullPrefix);
  const keys = parseViewerKeys(generateViewerKeySet('test'));
  const keyring = parseKeyring(newKeyringSpec());
  // Replica 0 re-checks open streams often (the pub/sub safety net); replica 1 practically never,
  // so a stream there that closes at once was closed by a pub/sub message.
  const build = (recheckIntervalMs: number) =>
    buildApp({
      db,
      redis: connection,
      queues,
      queuePrefix: ns.bullPrefix,
      keyVerifier: { cacheTtlMs: 0 },
      viewer: {
        keys,
        webUrl: WEB_URL,
        limits: { perTicket: 2, perTenant: 3 },
        highWaterBytes: 256 * 1024,
        recheckIntervalMs,
      },
      keyring,
    });
  const apps: [FastifyInstance, FastifyInstance] = [await build(300), await build(3_600_000)];
  const urls = (await Promise.all(
    apps.map((app) => app.listen({ host: '127.0.0.1', port: 0 })),
  )) as [string, string];
  const ta = await createTenant(db, { name: 'A' });
  const tb = await createTenant(db, { name: 'B' });
  const key = async (tenantId: string, role: 'admin' | 'member') =>
    `Bearer ${(await createApiKey(db, { tenantId, name: role, role })).key}`;
  const a = {
    tenantId: ta.id,
    admin: await key(ta.id, 'admin'),
    member: await key(ta.id, 'member'),
  };
  const b = { tenantId: tb.id, admin: await key(tb.id, 'admin') };
  const put = await apps[0].inject({
    method: 'PUT',
    url: '/v1/pools/view',
    headers: { authorization: a.admin },
    payload: { image: 'x', autoscaling: { min: 0, initial: 0, max: 50 } },
  });
  if (put.statusCode !== 201) throw new Error(`pool: ${put.body}`);
  const poolId = put.json().id as string;

  return {
    db,
    apps,
    urls,
    a,
    b,
    keys,
    connections: { db, redis: connection, queues, queuePrefix: ns.bullPrefix },
    workerDeps: createResources({
      db,
      queues,
      redis: connection,
      prefix: ns.bullPrefix,
      keyring,
    }),
    async claim(vncEndpoint, guestToken) {
      const id = newId('sandbox');
      await db.sandbox.create({
        data: {
          id,
          tenantId: a.tenantId,
          poolId,
          backend: 'local',
          image: 'x',
          generation: 1,
          state: 'warm',
          readyAt: new Date(),
          vncEndpoint,
          ...(guestToken && { guestTokenCiphertext: seal(keyring, guestToken, id) }),
        },
      });
      const res = await apps[0].inject({
        method: 'POST',
        url: '/v1/pools/view/claims',
        headers: { authorization: a.member },
        payload: { wait_seconds: 0 },
      });
      if (res.statusCode !== 201) throw new Error(`claim: ${res.statusCode} ${res.body}`);
      return res.json().id as string;
    },
    async close() {
      for (const app of apps) await app.close();
      await queues.close();
      connection.disconnect();
      await db.$disconnect();
      await ns.cleanup();
      await database.drop();
    },
  };
}

/**
 * RecordingVnc stands where a sandbox's x11vnc would be, for the proxy's byte-level checks: it
 * greets like an RFB 3.8 server and records every byte the proxy forwards to it. (The real
 * desktop is exercised end to end in test/e2e/viewer.test.ts.)
 */
export interface RecordingVnc {
  endpoint: string;
  /** Everything received, per connection, in order. */
  received: Buffer[][];
  /** Sends bytes to every connected client (server → viewer traffic). */
  broadcast(bytes: Buffer): void;
  /** The open server-side sockets, oldest first. */
  sockets(): Socket[];
  close(): Promise<void>;
}

export async function recordingVnc(): Promise<RecordingVnc> {
  const received: Buffer[][] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    const log: Buffer[] = [];
    received.push(log);
    sockets.add(socket);
    socket.on('data', (d) => log.push(d));
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.write('RFB 003.008\n');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return {
    endpoint: `127.0.0.1:${port}`,
    received,
    broadcast: (bytes) => sockets.forEach((s) => s.write(bytes)),
    sockets: () => [...sockets],
    async close() {
      sockets.forEach((s) => s.destroy());
      await new Promise((r) => server.close(r));
    },
  };
}
