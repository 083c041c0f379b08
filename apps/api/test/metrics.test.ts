// Metrics name tenants and pools: they are served on a private listener of their own (loopback
// by default, a bearer token when bound wider), and no unauthenticated answer of the public API
// carries a tenant identifier.
import { newKeyringSpec } from '@cubicle/control-plane';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiEnv } from '../src/env.js';
import { ApiMetrics } from '../src/metrics/api-metrics.js';
import { serveMetrics, type MetricsServer } from '../src/metrics/metrics-server.js';
import { fullAppFixture, type FullAppFixture } from './full-app-fixture.js';

const POOL = 'tenant-private-pool';

describe('metrics', () => {
  let fx: FullAppFixture;
  let metrics: ApiMetrics;
  let open: MetricsServer;
  let guarded: MetricsServer;
  beforeAll(async () => {
    // The series as main.ts builds them: pool sizes read from the fixture's database.
    fx = await fullAppFixture();
    metrics = new ApiMetrics(fx.db);
    await fx.claim(POOL);
    open = await serveMetrics(metrics, { host: '127.0.0.1', port: 0 });
    guarded = await serveMetrics(metrics, {
      host: '127.0.0.1',
      port: 0,
      token: 'scrape-token-0123456789',
    });
  });
  afterAll(async () => {
    await open?.close();
    await guarded?.close();
    await fx?.close();
  });

  it('the public API does not serve /metrics', async () => {
    const res = await fx.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('route_not_found');
  });

  it('no unauthenticated answer names a tenant or a pool', async () => {
    const answers = await Promise.all(
      [
        { method: 'GET', url: '/metrics' },
        { method: 'GET', url: '/healthz' },
        { method: 'GET', url: '/v1/version' },
        { method: 'GET', url: '/docs' },
        { method: 'GET', url: '/v1/pools' },
        { method: 'GET', url: `/v1/pools/${POOL}` },
        { method: 'POST', url: '/v1/viewer/introspect', payload: { ticket: 'a.b.c' } },
      ].map((r) => fx.app.inject(r as never)),
    );
    for (const res of answers) {
      expect(res.body).not.toContain(fx.a.id);
      expect(res.body).not.toContain(POOL);
    }
  });

  it('the private listener serves the series, tenant labels included', async () => {
    expect(open.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(`${open.url}/metrics`);
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body).toContain(`cubicle_pool_sandboxes{tenant="${fx.a.id}",pool="${POOL}"`);
    expect((await fetch(`${open.url}/`)).status).toBe(404);
    expect((await fetch(`${open.url}/metrics`, { method: 'POST' })).status).toBe(404);
  });

  it('time to first confirmed action is a histogram with no tenant or pool label', async () => {
    // The app's own series (drive routes observe it there) and the set main.ts serves alike.
    expect(fx.app.metrics.firstConfirmedAction).toBeDefined();
    metrics.firstConfirmedAction.observe(0.08);
    metrics.firstConfirmedAction.observe(1.7);
    const body = await (await fetch(`${open.url}/metrics`)).text();
    expect(body).toContain('# TYPE cubicle_time_to_first_confirmed_action_seconds histogram');
    expect(body).toContain('cubicle_time_to_first_confirmed_action_seconds_bucket{le="0.1"} 1');
    expect(body).toContain('cubicle_time_to_first_confirmed_action_seconds_bucket{le="2.5"} 2');
    expect(body).toContain('cubicle_time_to_first_confirmed_action_seconds_count 2');
    const lines = body.split('\n').filter((l) => l.startsWith('cubicle_time_to_first_'));
    expect(lines.some((l) => l.includes('tenant=') || l.includes('pool='))).toBe(false);
  });

  it('with a token, scrapes without it are 401', async () => {
    expect((await fetch(`${guarded.url}/metrics`)).status).toBe(401);
    const wrong = await fetch(`${guarded.url}/metrics`, {
      headers: { authorization: 'Bearer scrape-token-0123456780' },
    });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).not.toContain(fx.a.id);
    const right = await fetch(`${guarded.url}/metrics`, {
      headers: { authorization: 'Bearer scrape-token-0123456789' },
    });
    expect(right.status).toBe(200);
    expect(await right.text()).toContain('cubicle_pool_sandboxes');
  });

  it('the environment binds it to loopback, and wider only with a token', () => {
    const base = {
      DATABASE_URL: 'postgresql://x@localhost/db',
      REDIS_URL: 'redis://127.0.0.1',
      CUBICLE_KEYRING: newKeyringSpec(),
    };
    const parsed = ApiEnv.parse({ ...base, API_METRICS_PORT: '9464' });
    expect(parsed.API_METRICS_HOST).toBe('127.0.0.1');
    const wide = ApiEnv.safeParse({
      ...base,
      API_METRICS_PORT: '9464',
      API_METRICS_HOST: '0.0.0.0',
    });
    expect(wide.success).toBe(false);
    expect(wide.error?.issues[0]?.path).toEqual(['API_METRICS_TOKEN']);
    expect(
      ApiEnv.safeParse({
        ...base,
        API_METRICS_PORT: '9464',
        API_METRICS_HOST: '0.0.0.0',
        API_METRICS_TOKEN: 'scrape-token-0123456789',
      }).success,
    ).toBe(true);
  });
});
