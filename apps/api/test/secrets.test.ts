import { execFile } from 'node:child_process';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { newKeyringSpec, openEnvelope, parseKeyring, secretAad } from '@cubicle/control-plane';
import { createDb, type Db } from '@cubicle/db';
import { createQueueConnection, JobQueues } from '@cubicle/queue';
import { createApiKey, createTenant } from '@cubicle/tenancy';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, createTestRedisNamespace } from '../../../test/harness/index.js';
import { buildApp, redactPaths } from '../src/app.js';
import { testAppOptions } from './app-options.js';
import { fileURLToPath } from 'node:url';

const run = promisify(execFile);
const cli = fileURLToPath(new URL('../../../scripts/cubicle-cli.mjs', import.meta.url));
const VALUE = `tok-${Math.random().toString(36).slice(2)}/x+y z`;

/**
 * Stored (tenant-level) secrets and the claim request's secrets through the real API on real
 * PostgreSQL and Redis (no desktops: the pool has no capacity, so claims stay pending), with the
 * API's own pino logger captured; and key rotation through the `cubicle secrets rewrap` CLI.
 */
describe('secrets API', () => {
  let db: Db;
  let app: FastifyInstance;
  let connection: Redis;
  let queues: JobQueues;
  let databaseUrl: string;
  let cleanup: () => Promise<void>;
  const specA = newKeyringSpec('a');
  const log: string[] = [];
  const auth = { admin: '', member: '', other: '' };
  let otherTenantId = '';

  beforeAll(async () => {
    const database = await createTestDatabase();
    databaseUrl = database.url;
    const ns = createTestRedisNamespace();
    db = createDb({ databaseUrl, maxConnections: 5 });
    connection = createQueueConnection(ns.url);
    queues = new JobQueues(connection, ns.bullPrefix);
    const stream = new Writable({
      write(chunk, _enc, done) {
        log.push(String(chunk));
        done();
      },
    });
    app = await buildApp({
      db,
      redis: connection,
      queues,
      ...testAppOptions(ns.bullPrefix),
      keyVerifier: { cacheTtlMs: 0 },
      keyring: parseKeyring(specA),
      logger: {
        level: 'trace',
        stream,
        redact: { paths: redactPaths, censor: '[redacted]' },
        hooks: (await import('@cubicle/control-plane')).secretLogHooks(),
      },
    });
    const t = await createTenant(db, { name: 'sec' });
    const o = await createTenant(db, { name: 'other' });
    auth.admin = `Bearer ${(await createApiKey(db, { tenantId: t.id, name: 'a', role: 'admin' })).key}`;
    auth.member = `Bearer ${(await createApiKey(db, { tenantId: t.id, name: 'm', role: 'member' })).key}`;
    auth.other = `Bearer ${(await createApiKey(db, { tenantId: o.id, name: 'o', role: 'admin' })).key}`;
    otherTenantId = o.id;
    await app.inject({
      method: 'PUT',
      url: '/v1/pools/empty',
      headers: { authorization: auth.admin },
      payload: { image: 'x', autoscaling: { min: 0, initial: 0, max: 1 } },
    });
    cleanup = async () => {
      await app.close();
      await queues.close();
      connection.disconnect();
      await db.$disconnect();
      await ns.cleanup();
      await database.drop();
    };
  });
  afterAll(async () => cleanup?.());

  const call = (method: string, url: string, payload?: unknown, authorization = auth.admin) =>
    app.inject({
      method: method as 'GET',
      url,
      headers: { authorization },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });

  it('stored secrets are versioned and write-only; members may not write them', async () => {
    const v1 = await call('PUT', '/v1/secrets/AGENT_TOKEN', { value: `${VALUE}-1` });
    expect(v1.statusCode).toBe(201);
    expect(v1.json()).toMatchObject({ name: 'AGENT_TOKEN', version: 1 });
    const v2 = await call('POST', '/v1/secrets', { name: 'AGENT_TOKEN', value: VALUE });
    expect(v2.json()).toMatchObject({ name: 'AGENT_TOKEN', version: 2 });
    expect(v2.headers['cache-control']).toBe('no-store');
    const list = await call('GET', '/v1/secrets');
    expect(list.json()).toEqual({
      data: [
        {
          name: 'AGENT_TOKEN',
          version: 2,
          created_at: v1.json().created_at,
          updated_at: v2.json().updated_at,
          usable_by: 'admins',
          inject: null,
        },
      ],
      next_cursor: null,
    });
    expect(list.body + v1.body + v2.body).not.toContain(VALUE);
    const member = await call('PUT', '/v1/secrets/AGENT_TOKEN', { value: 'm' }, auth.member);
    expect(member.statusCode).toBe(403);
    expect((await call('GET', '/v1/secrets', undefined, auth.member)).statusCode).toBe(200);
    expect((await call('GET', '/v1/secrets', undefined, auth.other)).json().data).toEqual([]);
    expect(
      (await call('DELETE', '/v1/secrets/AGENT_TOKEN', undefined, auth.other)).statusCode,
    ).toBe(404);
    expect(await db.tenantSecret.count()).toBe(2);
  });

  it('a claim request with secrets stores them sealed (pending claim) and answers no value', async () => {
    const claim = await call('POST', '/v1/pools/empty/claims', {
      wait_seconds: 0,
      secrets: { CLAIM_TOKEN: VALUE },
      stored_secrets: ['AGENT_TOKEN'],
    });
    expect(claim.statusCode).toBe(202);
    expect(claim.body).not.toContain(VALUE);
    const rows = await db.claimSecret.findMany({ orderBy: { name: 'asc' } });
    expect(rows.map((r) => r.name)).toEqual(['AGENT_TOKEN', 'CLAIM_TOKEN']);
    const ring = parseKeyring(specA);
    for (const r of rows) {
      expect(Buffer.from(r.ciphertext).includes(Buffer.from(VALUE))).toBe(false);
      expect(openEnvelope(ring, r, secretAad(r.tenantId, r.name))).toBe(VALUE);
    }
    // A pending claim cannot take a secret by POST (its desktop does not exist yet) …
    const late = await call('POST', `/v1/claims/${claim.json().id}/secrets`, {
      name: 'X',
      value: 'y',
    });
    expect(late.statusCode).toBe(409);
    expect(late.json().error.code).toBe('claim_not_active');
    // … and nothing is queued for it: its desktop gets the current set before its first guest
    // call and at each run's start. No Redis key of the installation names the claim.
    const keys = await connection.keys('*');
    const dump = await Promise.all(
      keys.map(
        async (k) =>
          `${k} ${(await connection.type(k)) === 'hash' ? JSON.stringify(await connection.hgetall(k)) : ''}`,
      ),
    );
    expect(dump.join('\n')).not.toContain(claim.json().id);
    expect(dump.join('\n')).not.toContain(VALUE);
  });

  it("the API's logs contain no value, raw or encoded, even at trace level", async () => {
    // A failing request that names a value in a place a careless handler might echo it.
    await call('POST', `/v1/pools/empty/claims?x=${encodeURIComponent(VALUE)}`, {
      secrets: { BAD_NAME_: VALUE, 'bad-name': VALUE },
    });
    const text = log.join('');
    expect(text).toContain('"reqId"');
    for (const form of [VALUE, encodeURIComponent(VALUE), Buffer.from(VALUE).toString('base64')])
      expect(text).not.toContain(form);
  });

  it("a tenant's short secret breaks no log line, and its values rewrite no other tenant's lines", async () => {
    // Was: a value of any length from any tenant rewrote every line (":" broke every line's JSON).
    const claim = await call('POST', '/v1/pools/empty/claims', {
      wait_seconds: 0,
      secrets: { COLON: ':', QUOTE: '"', MASK: 'empty-pool-name' },
    });
    expect(claim.statusCode, claim.body).toBe(202);
    const from = log.length;
    await call('GET', '/v1/pools/empty', undefined, auth.other);
    await call('PUT', '/v1/pools/empty-pool-name', { image: 'x' }, auth.other);
    await call('GET', '/v1/pools/empty-pool-name', undefined, auth.other);
    await call('GET', '/v1/pools/empty');
    const lines = log.slice(from).join('').split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThan(4);
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
    const others = lines.filter(
      (l) => (JSON.parse(l) as { tenant_id?: string }).tenant_id === otherTenantId,
    );
    expect(others.length).toBeGreaterThan(0);
    expect(others.join('\n')).not.toContain('[secret:');
    // Its secrets end with it (the rotation below counts only the first claim's).
    expect((await call('DELETE', `/v1/claims/${claim.json().id}`)).statusCode).toBe(200);
  });

  it('rotation: key A seals, key B is added, old values open, rewrap moves all onto B, A can go', async () => {
    const specB = newKeyringSpec('b');
    const env = { ...process.env, DATABASE_URL: databaseUrl, CUBICLE_KEYRING: `${specB},${specA}` };
    const before = await db.claimSecret.findMany();
    expect(new Set(before.map((r) => r.keyId))).toEqual(new Set(['a']));
    // Before the rewrap, the rotated keyring opens values sealed under A.
    const both = parseKeyring(`${specB},${specA}`);
    for (const r of before)
      expect(openEnvelope(both, r, secretAad(r.tenantId, r.name))).toBe(VALUE);
    const { stdout } = await run(process.execPath, [cli, 'secrets', 'rewrap'], { env });
    expect(JSON.parse(stdout)).toEqual({
      rewrapped: { claim_secrets: 2, tenant_secrets: 2, tenant_data_keys: 0 },
      key_id: 'b',
    });
    const onlyB = parseKeyring(specB);
    const after = [...(await db.claimSecret.findMany()), ...(await db.tenantSecret.findMany())];
    expect(new Set(after.map((r) => r.keyId))).toEqual(new Set(['b']));
    for (const r of after)
      expect(openEnvelope(onlyB, r, secretAad(r.tenantId, r.name))).toMatch(/^tok-/);
    // The values' ciphertexts did not change: only the data keys were re-wrapped.
    for (const r of before)
      expect(
        Buffer.from(after.find((x) => x.id === r.id)!.ciphertext).equals(Buffer.from(r.ciphertext)),
      ).toBe(true);
    // A second run has nothing to do.
    const again = await run(process.execPath, [cli, 'secrets', 'rewrap'], { env });
    expect(JSON.parse(again.stdout).rewrapped).toEqual({
      claim_secrets: 0,
      tenant_secrets: 0,
      tenant_data_keys: 0,
    });
  });

  it('deleting a stored secret removes every version; unknown names are 404', async () => {
    expect((await call('DELETE', '/v1/secrets/AGENT_TOKEN')).statusCode).toBe(204);
    expect(await db.tenantSecret.count()).toBe(0);
    expect((await call('DELETE', '/v1/secrets/AGENT_TOKEN')).statusCode).toBe(404);
    expect((await call('PUT', '/v1/secrets/lower', { value: 'v' })).statusCode).toBe(400);
  });
});
