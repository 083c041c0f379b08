import { afterEach, describe, expect, it } from 'vitest';
import { startHealthServer, type HealthServer } from './health.js';

const open: HealthServer[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function serve(options: Partial<Parameters<typeof startHealthServer>[0]> = {}) {
  const server = startHealthServer({
    host: '127.0.0.1',
    port: 0,
    checks: {},
    running: () => true,
    ...options,
  });
  open.push(server);
  await server.listening;
  const get = async (path: string) => {
    const res = await fetch(`http://127.0.0.1:${server.port()}${path}`);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  return { server, get };
}

describe('worker health listener', () => {
  it('readiness names the failing dependency (down or timed out) and the stopped workers; liveness stays up', async () => {
    let running = true;
    const { get } = await serve({
      checks: {
        database: async () => 1,
        redis: () => Promise.reject(new Error('ECONNREFUSED /secret/path')),
        slow: () => new Promise(() => undefined),
      },
      running: () => running,
      checkTimeoutMs: 100,
    });
    expect(await get('/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
    const ready = await get('/readyz');
    expect(ready).toEqual({
      status: 503,
      body: {
        status: 'unavailable',
        checks: { database: 'ok', redis: 'down', slow: 'timeout', workers: 'ok' },
      },
    });
    // Error messages never reach the answer (they may carry connection details).
    expect(JSON.stringify(ready.body)).not.toContain('secret');
    running = false;
    expect((await get('/readyz')).body.checks).toMatchObject({ workers: 'stopped' });
  });

  it('all up is 200; once draining both probes answer 503; unknown paths 404', async () => {
    const { server, get } = await serve({ checks: { database: async () => 1 } });
    expect(await get('/readyz')).toEqual({
      status: 200,
      body: { status: 'ok', checks: { database: 'ok', workers: 'ok' } },
    });
    expect((await get('/nope')).status).toBe(404);
    server.markClosing();
    expect(await get('/healthz')).toEqual({ status: 503, body: { status: 'closing' } });
    expect((await get('/readyz')).status).toBe(503);
  });
});
