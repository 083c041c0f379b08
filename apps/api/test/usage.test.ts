import { PoolInsights, Usage } from '@cubicle/contract/api';
import { newId } from '@cubicle/db';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, identityFixture, type IdentityFixture, type TestTenant } from './auth-fixtures.js';

/** GET /v1/usage and /v1/pools/{name}/insights through the real app on real Postgres. */
describe('usage API', () => {
  let fx: IdentityFixture;
  let app: FastifyInstance;
  let acme: TestTenant;
  let globex: TestTenant;

  beforeAll(async () => {
    fx = await identityFixture();
    app = await fx.build();
    acme = await fx.tenant('Acme');
    globex = await fx.tenant('Globex');
    const put = await app.inject({
      method: 'PUT',
      url: '/v1/pools/web',
      headers: bearer(acme.admin.key),
      payload: { image: 'img', autoscaling: { min: 0, initial: 0, max: 5 } },
    });
    expect(put.statusCode).toBe(201);
    const pool = await fx.db.pool.findFirstOrThrow({ where: { tenantId: acme.id, name: 'web' } });
    // One rolled-up hour for acme, as the rollup writes it.
    await fx.db.usageHourly.create({
      data: {
        tenantId: acme.id,
        poolId: pool.id,
        hour: new Date('2026-05-01T10:00:00Z'),
        claims: 2,
        claimSeconds: 1234.5,
        warmSeconds: 3600,
      },
    });
  });
  afterAll(async () => fx?.close());

  const get = (key: string, url: string) =>
    app.inject({ method: 'GET', url, headers: bearer(key) });

  it('answers the tenant its own rows per pool and per day, with totals', async () => {
    const res = await get(
      acme.admin.key,
      '/v1/usage?from=2026-05-01T00:00:00Z&to=2026-05-02T00:00:00Z&group_by=day',
    );
    expect(res.statusCode).toBe(200);
    const usage = Usage.parse(res.json());
    expect(usage.rows).toHaveLength(1);
    expect(usage.rows[0]).toMatchObject({
      pool: 'web',
      period_start: '2026-05-01T00:00:00.000Z',
      claims: 2,
      claim_seconds: 1234.5,
      warm_seconds: 3600,
    });
    expect(usage.totals.claim_seconds).toBe(1234.5);
  });

  it('another tenant sees none of it; a member key is refused', async () => {
    const res = await get(
      globex.admin.key,
      '/v1/usage?from=2026-05-01T00:00:00Z&to=2026-05-02T00:00:00Z',
    );
    expect(res.statusCode).toBe(200);
    expect(Usage.parse(res.json()).rows).toEqual([]);
    const member = await get(
      acme.member.key,
      '/v1/usage?from=2026-05-01T00:00:00Z&to=2026-05-02T00:00:00Z',
    );
    expect(member.statusCode).toBe(403);
    expect(member.json().error.code).toBe('forbidden');
    const insights = await get(globex.admin.key, '/v1/pools/web/insights');
    expect(insights.statusCode).toBe(404);
    expect(insights.json().error.code).toBe('not_found');
  });

  it.each([
    ['missing from', '/v1/usage?to=2026-05-02T00:00:00Z'],
    ['not a time', '/v1/usage?from=yesterday&to=2026-05-02T00:00:00Z'],
    ['to before from', '/v1/usage?from=2026-05-02T00:00:00Z&to=2026-05-01T00:00:00Z'],
    ['unknown group', '/v1/usage?from=2026-05-01T00:00:00Z&to=2026-05-02T00:00:00Z&group_by=week'],
    ['too many hours', '/v1/usage?from=2026-01-01T00:00:00Z&to=2026-05-01T00:00:00Z&group_by=hour'],
    [
      'unknown field',
      '/v1/usage?from=2026-05-01T00:00:00Z&to=2026-05-02T00:00:00Z&tenant=' + newId('tenant'),
    ],
  ])('bad query (%s) → 400 validation_failed', async (_why, url) => {
    const res = await get(acme.admin.key, url);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('validation_failed');
  });

  it("a claim's kept screenshot is its PNG bytes and its viewer connections list, for its tenant only", async () => {
    const pool = await fx.db.pool.findFirstOrThrow({ where: { tenantId: acme.id, name: 'web' } });
    const claimId = newId('claim');
    const sandboxId = newId('sandbox');
    const ticketId = newId('viewer_ticket');
    const png = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.from('pixels')]);
    const expires = new Date(Date.now() + 600_000);
    await fx.db.sandbox.create({
      data: {
        id: sandboxId,
        tenantId: acme.id,
        poolId: pool.id,
        backend: 'local',
        image: 'img',
        generation: 1,
      },
    });
    await fx.db.claim.create({
      data: {
        id: claimId,
        tenantId: acme.id,
        poolId: pool.id,
        name: 'history',
        ttlSeconds: 600,
        expiresAt: expires,
        maxExpiresAt: expires,
      },
    });
    await fx.db.viewerTicket.create({
      data: {
        id: ticketId,
        tenantId: acme.id,
        claimId,
        sandboxId,
        mode: 'view',
        expiresAt: expires,
      },
    });
    await fx.db.claimScreenshot.create({
      data: {
        claimId,
        screenshotId: 'p7',
        tenantId: acme.id,
        windowId: 3n,
        width: 8,
        height: 4,
        data: png,
      },
    });
    await fx.db.viewerConnection.create({
      data: {
        tenantId: acme.id,
        claimId,
        ticketId,
        mode: 'view',
        connectedAt: new Date('2026-05-01T10:00:00Z'),
      },
    });

    const shot = await get(acme.member.key, `/v1/claims/${claimId}/screenshots/p7`);
    expect(shot.statusCode).toBe(200);
    expect(shot.headers['content-type']).toBe('image/png');
    expect(shot.rawPayload).toEqual(png);
    const viewers = await get(acme.member.key, `/v1/claims/${claimId}/viewer-connections`);
    expect(viewers.statusCode).toBe(200);
    expect(viewers.json().data).toMatchObject([
      {
        ticket_id: ticketId,
        mode: 'view',
        connected_at: '2026-05-01T10:00:00.000Z',
        disconnected_at: null,
      },
    ]);

    for (const url of [
      `/v1/claims/${claimId}/screenshots/p7`,
      `/v1/claims/${claimId}/viewer-connections`,
    ]) {
      const other = await get(globex.admin.key, url);
      expect(other.statusCode).toBe(404);
      expect(other.json().error.code).toBe('not_found');
    }
    expect((await get(acme.member.key, `/v1/claims/${claimId}/screenshots/p8`)).statusCode).toBe(
      404,
    );
    const bad = await get(acme.member.key, `/v1/claims/${claimId}/screenshots/..%2Fetc`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('invalid_id');
  });

  it('pool insights answer for the own pool', async () => {
    const res = await get(acme.member.key, '/v1/pools/web/insights?window=day');
    expect(res.statusCode).toBe(200);
    const insights = PoolInsights.parse(res.json());
    expect(insights.samples).toHaveLength(96);
    expect(insights.hints).toEqual([]);
    const bad = await get(acme.member.key, '/v1/pools/web/insights?window=week');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('validation_failed');
  });
});
