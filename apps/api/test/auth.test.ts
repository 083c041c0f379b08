import { ErrorEnvelope } from '@cubicle/contract/errors';
import { generateApiKey, revokeApiKeyAsOperator } from '@cubicle/tenancy';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, identityFixture, type IdentityFixture, type TestTenant } from './auth-fixtures.js';

describe('bearer key authentication', () => {
  let fx: IdentityFixture;
  let app: FastifyInstance;
  let acme: TestTenant;

  beforeAll(async () => {
    fx = await identityFixture();
    app = await fx.build();
    acme = await fx.tenant('Acme');
  });
  afterAll(async () => fx?.close());

  async function expect401(headers: Record<string, string>, method: 'GET' | 'POST' = 'GET') {
    const res = await app.inject({ method, url: '/v1/api-keys', headers });
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    const body = ErrorEnvelope.parse(res.json());
    expect(body.error.code).toBe('unauthenticated');
    return body.error.message;
  }

  it('answers 401 unauthenticated, with one message, for every kind of bad credential', async () => {
    const revoked = await fx.tenant('Revoked Inc');
    await revokeApiKeyAsOperator(fx.db, revoked.admin.id);
    const messages = new Set([
      await expect401({}),
      await expect401({ authorization: '' }),
      await expect401({ authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }),
      await expect401({ authorization: 'Bearer' }),
      await expect401({ authorization: 'Bearer not-a-key' }),
      await expect401({ authorization: `Bearer ${acme.admin.key} extra` }),
      await expect401(bearer(generateApiKey().key)), // well-formed, unknown
      await expect401(bearer(revoked.admin.key)),
      await expect401(bearer(acme.admin.key.toUpperCase())),
    ]);
    // Unknown, revoked and malformed keys read the same: nothing tells whether a key exists.
    expect(messages.size).toBe(1);
  });

  it('authenticates before reading the body: a bad body without a key is still 401', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/api-keys',
      headers: { 'content-type': 'application/json' },
      payload: '{"name":',
    });
    expect(res.statusCode).toBe(401);
  });

  it('accepts a valid key (scheme case-insensitive) and answers 403 forbidden to members on admin routes', async () => {
    const ok = await app.inject({
      method: 'GET',
      url: '/v1/api-keys',
      headers: { authorization: `bearer ${acme.admin.key}` },
    });
    expect(ok.statusCode).toBe(200);

    for (const req of [
      { method: 'GET' as const, url: '/v1/api-keys' },
      { method: 'POST' as const, url: '/v1/api-keys', payload: { name: 'x', role: 'admin' } },
      { method: 'DELETE' as const, url: `/v1/api-keys/${acme.admin.id}` },
      { method: 'GET' as const, url: '/v1/audit-events' },
    ]) {
      const res = await app.inject({ ...req, headers: bearer(acme.member.key) });
      expect(res.statusCode, req.url).toBe(403);
      expect(res.json().error.code).toBe('forbidden');
    }
    // The member's attempt changed nothing: the admin key still works.
    const still = await app.inject({
      method: 'GET',
      url: '/v1/api-keys',
      headers: bearer(acme.admin.key),
    });
    expect(still.statusCode).toBe(200);
  });

  it('stops a revoked key at once on the replica that revoked it', async () => {
    const t = await fx.tenant('Revoke Co');
    const first = await app.inject({
      method: 'GET',
      url: '/v1/api-keys',
      headers: bearer(t.member.key),
    });
    expect(first.statusCode).toBe(403); // known and cached: a member on an admin route
    const del = await app.inject({
      method: 'DELETE',
      url: `/v1/api-keys/${t.member.id}`,
      headers: bearer(t.admin.key),
    });
    expect(del.statusCode).toBe(204);
    const after = await app.inject({
      method: 'GET',
      url: '/v1/api-keys',
      headers: bearer(t.member.key),
    });
    expect(after.statusCode).toBe(401);
  });

  it('stops a key revoked elsewhere within the key cache TTL', async () => {
    const ttl = 300;
    const other = await fx.build({ keyVerifier: { cacheTtlMs: ttl } });
    const t = await fx.tenant('Elsewhere');
    const get = () =>
      other.inject({ method: 'GET', url: '/v1/api-keys', headers: bearer(t.admin.key) });
    expect((await get()).statusCode).toBe(200);
    // Revoked by the operator CLI's code path: this app's cache does not know yet.
    await revokeApiKeyAsOperator(fx.db, t.admin.id);
    await new Promise((r) => setTimeout(r, ttl + 50));
    expect((await get()).statusCode).toBe(401);
  });

  it('records last_used_at on use', async () => {
    const t = await fx.tenant('Used');
    const before = await fx.db.apiKey.findUniqueOrThrow({ where: { id: t.admin.id } });
    expect(before.lastUsedAt).toBeNull();
    const started = Date.now();
    const res = await app.inject({
      method: 'GET',
      url: '/v1/api-keys',
      headers: bearer(t.admin.key),
    });
    expect(res.statusCode).toBe(200);
    // The write is off the request path; poll until it lands.
    let used: Date | null = null;
    for (let i = 0; i < 50 && !used; i++) {
      used = (await fx.db.apiKey.findUniqueOrThrow({ where: { id: t.admin.id } })).lastUsedAt;
      if (!used) await new Promise((r) => setTimeout(r, 20));
    }
    expect(used).not.toBeNull();
    expect(used!.getTime()).toBeGreaterThanOrEqual(started - 1000);
    const listed = await app.inject({
      method: 'GET',
      url: '/v1/api-keys',
      headers: bearer(t.admin.key),
    });
    const self = listed.json().data.find((k: { id: string }) => k.id === t.admin.id);
    expect(self.last_used_at).not.toBeNull();
  });
});
