import { ApiKey, ApiKeyCreated, listOf } from '@cubicle/contract/api';
import { hashApiKey } from '@cubicle/tenancy';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, identityFixture, type IdentityFixture, type TestTenant } from './auth-fixtures.js';

describe('API key routes', () => {
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

  const create = (key: string, payload: Record<string, unknown>) =>
    app.inject({ method: 'POST', url: '/v1/api-keys', headers: bearer(key), payload });
  const list = (key: string, query = '') =>
    app.inject({ method: 'GET', url: `/v1/api-keys${query}`, headers: bearer(key) });

  it('shows a new key once, stores only its hash, and the key works', async () => {
    const res = await create(acme.admin.key, { name: 'ci runner', role: 'member' });
    expect(res.statusCode).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const created = ApiKeyCreated.parse(res.json());
    expect(created).toMatchObject({
      name: 'ci runner',
      role: 'member',
      last_used_at: null,
      revoked_at: null,
    });
    expect(created.key.startsWith(created.prefix)).toBe(true);

    // The database holds the hash and the prefix, never the key: search every text column.
    const row = await fx.db.apiKey.findUniqueOrThrow({ where: { id: created.id } });
    expect(row.hash).toBe(hashApiKey(created.key));
    const dump = JSON.stringify(await fx.db.$queryRaw`SELECT * FROM api_keys`);
    expect(dump).not.toContain(created.key);
    expect(dump).not.toContain(created.key.slice(12));

    // Never shown again: the list has the prefix and no key field.
    const listed = listOf(ApiKey).parse((await list(acme.admin.key)).json());
    const again = listed.data.find((k) => k.id === created.id);
    expect(again).toEqual({ ...created, key: undefined, last_used_at: null });
    expect(JSON.stringify(listed)).not.toContain(created.key);

    // The new member key authenticates (403 on an admin route proves it was recognised).
    expect((await list(created.key)).statusCode).toBe(403);
  });

  it('defaults the role to member and rejects bad bodies with 400', async () => {
    const res = await create(acme.admin.key, { name: 'default role' });
    expect(res.statusCode).toBe(201);
    expect(res.json().role).toBe('member');
    for (const payload of [
      {},
      { name: '' },
      { name: 'x', role: 'owner' },
      { name: 'x', extra: 1 },
    ]) {
      const bad = await create(acme.admin.key, payload);
      expect(bad.statusCode, JSON.stringify(payload)).toBe(400);
      expect(bad.json().error.code).toBe('validation_failed');
    }
  });

  it('lists only the caller tenant keys, oldest first, with cursor pagination', async () => {
    for (let i = 0; i < 3; i++)
      await create(globex.admin.key, { name: `page ${i}`, role: 'member' });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await list(globex.admin.key, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.statusCode).toBe(200);
      const pageBody = listOf(ApiKey).parse(res.json());
      expect(pageBody.data.length).toBeLessThanOrEqual(2);
      seen.push(...pageBody.data.map((k) => k.id));
      cursor = pageBody.next_cursor;
    } while (cursor);
    const expected = await fx.db.apiKey.findMany({
      where: { tenantId: globex.id },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
    expect(seen).toEqual(expected.map((k) => k.id));
    expect(seen).toHaveLength(5); // admin + member + 3
    expect(seen).not.toContain(acme.admin.id);

    const badCursor = await list(globex.admin.key, '?cursor=bm90LWEtY3Vyc29y');
    expect(badCursor.statusCode).toBe(400);
    expect(badCursor.json().error.code).toBe('validation_failed');
  });

  it("answers 404 for another tenant's key id and changes nothing", async () => {
    const res = await app.inject({
      method: 'DELETE',
      url: `/v1/api-keys/${acme.member.id}`,
      headers: bearer(globex.admin.key),
    });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('not_found');
    const row = await fx.db.apiKey.findUniqueOrThrow({ where: { id: acme.member.id } });
    expect(row.revokedAt).toBeNull();

    const unknown = await app.inject({
      method: 'DELETE',
      url: `/v1/api-keys/key_${'0'.repeat(26)}`,
      headers: bearer(globex.admin.key),
    });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.message).toBe(res.json().error.message);

    const malformed = await app.inject({
      method: 'DELETE',
      url: '/v1/api-keys/not-an-id',
      headers: bearer(globex.admin.key),
    });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().error.code).toBe('invalid_id');
  });

  it('revokes idempotently and the revoked key stops working', async () => {
    const created = ApiKeyCreated.parse(
      (await create(acme.admin.key, { name: 'short-lived', role: 'admin' })).json(),
    );
    expect((await list(created.key)).statusCode).toBe(200);
    const revoke = () =>
      app.inject({
        method: 'DELETE',
        url: `/v1/api-keys/${created.id}`,
        headers: bearer(acme.admin.key),
      });
    expect((await revoke()).statusCode).toBe(204);
    const first = await fx.db.apiKey.findUniqueOrThrow({ where: { id: created.id } });
    expect(first.revokedAt).not.toBeNull();
    expect((await revoke()).statusCode).toBe(204);
    const second = await fx.db.apiKey.findUniqueOrThrow({ where: { id: created.id } });
    expect(second.revokedAt).toEqual(first.revokedAt);
    expect((await list(created.key)).statusCode).toBe(401);
    const shown = listOf(ApiKey).parse((await list(acme.admin.key, '?limit=200')).json());
    expect(shown.data.find((k) => k.id === created.id)?.revoked_at).toBe(
      first.revokedAt!.toISOString(),
    );
  });
});
