import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { newKeyringSpec } from '@cubicle/control-plane';
import { createDb, newId, type Db } from '@cubicle/db';
import { createApiKey, createTenant } from '@cubicle/tenancy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, createTestRedisNamespace } from '../../../test/harness/index.js';
import { recordingVnc, type RecordingVnc } from './viewer-fixture.js';
import { openStream } from './viewer-ws.js';

const mainJs = fileURLToPath(new URL('../dist/main.js', import.meta.url));

/**
 * What a rolling update does to one API Pod: SIGTERM while a request is in flight, a viewer is
 * watching and a run's events are followed over SSE. The built process (apps/api/dist/main.js)
 * on real Postgres and Redis: the streams end with a close frame, the request gets its answer,
 * no new connection is served, and only then do the queues, Redis and Postgres close, in that
 * order (read from the process's own `{ closed }` log records), before it exits 0.
 */
describe('API SIGTERM drain (a rolling update)', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let redis: ReturnType<typeof createTestRedisNamespace>;
  let db: Db;
  let vnc: RecordingVnc;
  let child: ChildProcess | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
    redis = createTestRedisNamespace();
    db = createDb({ databaseUrl: database.url, maxConnections: 2 });
    vnc = await recordingVnc();
  });
  afterAll(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await vnc?.close();
    await db?.$disconnect();
    await redis?.cleanup();
    await database?.drop();
  });

  it('streams get close frames, the in-flight request its answer, then queues, Redis, Postgres close', async () => {
    const proc = spawn(process.execPath, [mainJs], {
      env: {
        PATH: process.env.PATH,
        DATABASE_URL: database.url,
        REDIS_URL: redis.url,
        QUEUE_PREFIX: redis.bullPrefix,
        CUBICLE_KEYRING: newKeyringSpec(),
        API_HOST: '127.0.0.1',
        API_PORT: '0',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    let out = '';
    proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const exited = once(proc, 'exit');
    const base = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`API did not start: ${out}`)), 20_000);
      proc.stdout!.on('data', () => {
        const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
    });

    const tenant = await createTenant(db, { name: 'drain' });
    const { key } = await createApiKey(db, { tenantId: tenant.id, name: 'a', role: 'admin' });
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const pool = await call('PUT', '/v1/pools/drain', {
      image: 'img',
      autoscaling: { min: 0, initial: 0, max: 5 },
    });
    expect(pool.status).toBe(201);
    // A warm sandbox whose VNC is the recording server: the claim is active at once.
    await db.sandbox.create({
      data: {
        id: newId('sandbox'),
        tenantId: tenant.id,
        poolId: pool.body.id as string,
        backend: 'local',
        image: 'img',
        generation: 1,
        state: 'warm',
        readyAt: new Date(),
        vncEndpoint: vnc.endpoint,
      },
    });
    const claim = await call('POST', '/v1/pools/drain/claims', { wait_seconds: 0 });
    expect(claim.status).toBe(201);
    const claimId = claim.body.id as string;
    const ticket = await call('POST', `/v1/claims/${claimId}/viewer-tickets`, { mode: 'view' });
    expect(ticket.status).toBe(201);
    const viewer = await openStream(base, ticket.body.ticket as string);
    // A run no worker starts: its event stream stays open, waiting.
    const run = await call('POST', `/v1/claims/${claimId}/runs`, { argv: ['true'] });
    expect(run.status).toBe(202);
    const sse = await fetch(`${base}/v1/runs/${run.body.id as string}/events/stream`, {
      headers: { authorization: headers.authorization, accept: 'text/event-stream' },
    });
    expect(sse.status).toBe(200);
    // Resolves when the server ends the response; throws on an abrupt cut.
    const sseEnded = sse.text();

    // In flight: a claim on a pool with nothing warm waits up to wait_seconds for a sandbox.
    const inFlight = call('POST', '/v1/pools/drain/claims', { wait_seconds: 3 });
    for (let i = 0; i < 100; i += 1) {
      if ((await db.claim.count({ where: { tenantId: tenant.id } })) === 2) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(await db.claim.count({ where: { tenantId: tenant.id } })).toBe(2);

    proc.kill('SIGTERM');
    const closed = await viewer.closed;
    // Stopped accepting: a new connection is refused (or answered 503 while closing).
    const late = await fetch(`${base}/v1/version`, {
      headers: { connection: 'close' },
    }).then(
      (r) => r.status,
      () => 'refused' as const,
    );
    const answered = await inFlight;
    await sseEnded;
    const [code] = await exited;

    expect(code, out.slice(-3000)).toBe(0);
    expect(closed).toMatchObject({ code: 4503, reason: 'server shutting down, reconnect' });
    expect(late === 'refused' || late === 503).toBe(true);
    expect(answered.status, JSON.stringify(answered.body)).toBe(202);
    expect(answered.body.status).toBe('pending');

    // The process's own record of what it closed, in order, each after the streams and the answer.
    // Order is read from the server's records alone: a client's receive time lags the server's
    // send by however long the test process waits for a core (9 ms once in a loaded run).
    type LogRecord = {
      closed?: string;
      time: number;
      msg: string;
      reqId?: string;
      req?: { url?: string };
    };
    const records = out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as LogRecord);
    const closes = records.filter((r) => r.closed);
    expect(closes.map((r) => r.closed)).toEqual(['queues', 'redis', 'postgres']);
    const firstClose = closes[0]!.time;
    /** When the server logged `msg` for the last request to a url starting with `prefix`. */
    const loggedAt = (prefix: string, msg: string) => {
      const reqId = records
        .filter((r) => r.msg === 'incoming request' && r.req?.url?.startsWith(prefix))
        .at(-1)?.reqId;
      const at = records.find((r) => r.reqId === reqId && r.msg === msg)?.time;
      expect(at, `${msg} for ${prefix} in ${out.slice(-3000)}`).toBeDefined();
      return at!;
    };
    expect(loggedAt('/v1/viewer/stream', 'viewer stream closed')).toBeLessThanOrEqual(firstClose);
    expect(loggedAt('/v1/runs/', 'request completed')).toBeLessThanOrEqual(firstClose);
    expect(loggedAt('/v1/pools/drain/claims', 'request completed')).toBeLessThanOrEqual(firstClose);
    expect(records.at(-1)?.msg).toBe('shut down');
  });
});
