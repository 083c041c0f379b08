import { AuditEvent, listOf } from '@cubicle/contract/api';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, identityFixture, type IdentityFixture, type TestTenant } from './auth-fixtures.js';

const AuditPage = listOf(AuditEvent);

describe('audit trail', () => {
  let fx: IdentityFixture;
  let app: FastifyInstance;
  let acme: TestTenant;
  let globex: TestTenant;

  beforeAll(async () => {
    fx = await identityFixture();
    app = await fx.build();
    acme = await fx.tenant('Acme');
    globex = await fx.tenant('Globex');
  });
  afterAll(async () => fx?.close());

  async function events(key: string, query = '') {
    await app.auditSettled!();
    const res = await app.inject({
      method: 'GET',
      url: `/v1/audit-events${query}`,
      headers: bearer(key),
    });
    expect(res.statusCode).toBe(200);
    return AuditPage.parse(res.json());
  }

  it('records a successful mutating call with key, action, target, status and request id', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/api-keys',
      headers: { ...bearer(acme.admin.key), 'x-request-id': 'audit-ok-1' },
      payload: { name: 'deploy', role: 'member' },
    });
    expect(res.statusCode).toBe(201);
    const created = res.json();
    const [event] = (await events(acme.admin.key)).data;
    expect(event).toMatchObject({
      actor: { type: 'api_key', api_key_id: acme.admin.id, key_prefix: acme.admin.prefix },
      action: 'api_key.create',
      target_type: 'api_key',
      target_id: created.id,
      result: 'success',
      status_code: 201,
      request_id: 'audit-ok-1',
      details: {},
    });
    // The audit log never holds the key it recorded the creation of.
    const dump = JSON.stringify(await fx.db.$queryRaw`SELECT * FROM audit_events`);
    expect(dump).not.toContain(created.key);
  });

  it('records failures (404, 400, 403) with the error code and without request bodies', async () => {
    const secretish = 'sk-live-DO-NOT-STORE-0123456789';
    const cases = [
      {
        key: acme.admin.key,
        req: { method: 'DELETE' as const, url: `/v1/api-keys/${globex.admin.id}` },
        expect: {
          status_code: 404,
          target_id: globex.admin.id,
          details: { error_code: 'not_found' },
        },
      },
      {
        key: acme.admin.key,
        req: {
          method: 'POST' as const,
          url: '/v1/api-keys',
          payload: { name: secretish, role: 'root' },
        },
        expect: { status_code: 400, target_id: null, details: { error_code: 'validation_failed' } },
      },
      {
        key: acme.member.key,
        req: { method: 'POST' as const, url: '/v1/api-keys', payload: { name: secretish } },
        expect: {
          status_code: 403,
          actor: { type: 'api_key', api_key_id: acme.member.id, key_prefix: acme.member.prefix },
          details: { error_code: 'forbidden' },
        },
      },
    ];
    for (const c of cases) {
      const res = await app.inject({ ...c.req, headers: bearer(c.key) });
      expect(res.statusCode).toBe(c.expect.status_code);
      const [event] = (await events(acme.admin.key)).data;
      expect(event).toMatchObject({
        result: 'failure',
        request_id: res.headers['x-request-id'],
        ...c.expect,
      });
    }
    const dump = JSON.stringify(await fx.db.$queryRaw`SELECT * FROM audit_events`);
    expect(dump).not.toContain(secretish);
    for (const k of [acme.admin.key, acme.member.key, globex.admin.key])
      expect(dump).not.toContain(k);
  });

  it('writes nothing for reads and for calls without a valid key', async () => {
    const before = await fx.db.auditEvent.count();
    await app.inject({ method: 'GET', url: '/v1/api-keys', headers: bearer(acme.admin.key) });
    await app.inject({ method: 'POST', url: '/v1/api-keys', payload: { name: 'x' } });
    await app.inject({
      method: 'DELETE',
      url: `/v1/api-keys/${acme.member.id}`,
      headers: { authorization: 'Bearer cbk_nope' },
    });
    await app.auditSettled!();
    // The GET /v1/audit-events of `events()` is a read too.
    expect(await fx.db.auditEvent.count()).toBe(before);
  });

  it("lists the tenant's events newest first with cursor pagination, and no other tenant's", async () => {
    for (let i = 0; i < 5; i++) {
      const res = await app.inject({
        method: 'POST',
        url: '/v1/api-keys',
        headers: bearer(globex.admin.key),
        payload: { name: `k${i}` },
      });
      expect(res.statusCode).toBe(201);
    }
    const all: AuditEvent[] = [];
    let cursor: string | null = null;
    do {
      const pageBody = await events(
        globex.admin.key,
        `?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(pageBody.data.length).toBeLessThanOrEqual(2);
      all.push(...pageBody.data);
      cursor = pageBody.next_cursor;
    } while (cursor);
    expect(all).toHaveLength(5);
    expect(new Set(all.map((e) => e.id)).size).toBe(5);
    const times = all.map((e) => e.created_at);
    expect([...times].sort().reverse()).toEqual(times);
    const rows = await fx.db.auditEvent.findMany({
      where: { tenantId: globex.id },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    });
    expect(all.map((e) => e.id)).toEqual(rows.map((r) => r.id));
    expect(
      all.every((e) => e.actor.type === 'api_key' && e.actor.api_key_id === globex.admin.id),
    ).toBe(true);

    const acmeEvents = await events(acme.admin.key, '?limit=200');
    expect(
      acmeEvents.data.some(
        (e) => e.actor.type === 'api_key' && e.actor.api_key_id === globex.admin.id,
      ),
    ).toBe(false);

    const bad = await app.inject({
      method: 'GET',
      url: `/v1/audit-events?cursor=${Buffer.from('2026-01-01T00:00:00.000Z|key_x').toString('base64url')}`,
      headers: bearer(globex.admin.key),
    });
    expect(bad.statusCode).toBe(400);
  });
});
