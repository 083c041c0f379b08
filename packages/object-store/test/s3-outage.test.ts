// The S3 back end when the server goes away: a private versitygw (not the run's shared one) is
// stopped by its pid mid-suite; calls fail fast with object_store_unavailable, a put that failed
// left nothing behind, and after a restart on the same data the old objects are whole. A server
// that accepts connections and never answers costs the bounded attempt timeout, not a hang.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startS3Server, type S3Server } from '../../../test/harness/s3-server.js';
import {
  createObjectStore,
  ObjectStoreError,
  tenantObjects,
  type S3StoreConfig,
} from '../src/index.js';

const dataKey = randomBytes(32);
const deps = { dataKeys: { dataKey: async () => dataKey } };

async function timedCode(promise: Promise<unknown>): Promise<{ code: string; ms: number }> {
  const started = performance.now();
  try {
    await promise;
    return { code: 'ok', ms: performance.now() - started };
  } catch (error) {
    const code = error instanceof ObjectStoreError ? error.code : `unexpected: ${String(error)}`;
    return { code, ms: performance.now() - started };
  }
}

const configOf = (server: S3Server): S3StoreConfig => ({
  kind: 's3',
  endpoint: server.endpoint,
  region: server.region,
  bucket: server.bucket,
  accessKeyId: server.accessKeyId,
  secretAccessKey: server.secretAccessKey,
  forcePathStyle: true,
  attemptTimeoutMs: 1_000,
  maxAttempts: 2,
});

describe('S3 store outage', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cubicle-s3-outage-'));
  let server: S3Server;
  beforeAll(async () => {
    server = await startS3Server({ dir });
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a stopped server: every call fails quickly with object_store_unavailable, nothing half-written', async () => {
    const objects = tenantObjects(createObjectStore(configOf(server)), 'ten_outage', deps);
    await objects.put('doc', Buffer.from('version 1'));
    await server.stop();
    const attempts = [
      await timedCode(objects.put('doc', Buffer.from('version 2'))),
      await timedCode(objects.put('fresh', Buffer.from('never stored'))),
      await timedCode(objects.get('doc')),
      await timedCode(objects.head('doc')),
      await timedCode(
        (async () => {
          for await (const info of objects.list('')) void info;
        })(),
      ),
      await timedCode(objects.delete(['doc'])),
      await timedCode(objects.deletePrefix('')),
    ];
    for (const attempt of attempts) {
      expect(attempt.code).toBe('object_store_unavailable');
      // Refused connections: two attempts and a short backoff, far below any request timeout.
      expect(attempt.ms).toBeLessThan(3_000);
    }
    console.log(`outage: ${attempts.map((a) => Math.round(a.ms)).join(', ')} ms per call`);

    // Back on the same data and credentials: the object is version 1, whole; the failed put left nothing.
    server = await startS3Server({
      dir,
      bucket: server.bucket,
      port: Number(new URL(server.endpoint).port),
      credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
    });
    const again = tenantObjects(createObjectStore(configOf(server)), 'ten_outage', deps);
    expect(Buffer.from(await again.get('doc')).toString()).toBe('version 1');
    expect(await again.head('fresh')).toBeUndefined();
    const keys: string[] = [];
    for await (const info of again.list('')) keys.push(info.key);
    expect(keys).toEqual(['doc']);
  });

  it('a server that accepts and never answers costs the bounded timeout, not a hang', async () => {
    const sockets: Socket[] = [];
    const silent: Server = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    try {
      const store = createObjectStore({
        ...configOf(server),
        endpoint: `http://127.0.0.1:${port}`,
        attemptTimeoutMs: 500,
        maxAttempts: 2,
      });
      const put = await timedCode(store.put('k', Buffer.from('x')));
      const get = await timedCode(store.get('k'));
      console.log(`silent server: put ${Math.round(put.ms)} ms, get ${Math.round(get.ms)} ms`);
      for (const result of [put, get]) {
        expect(result.code).toBe('object_store_unavailable');
        // Two attempts of 500 ms and a backoff; the whole-call deadline (3 s) is the last resort.
        expect(result.ms).toBeGreaterThanOrEqual(900);
        expect(result.ms).toBeLessThan(2_000);
      }
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
