import {
  listOf,
  Webhook,
  WebhookDelivery,
  WebhookPayload,
  WebhookWithSecret,
} from '@cubicle/contract/api';
import {
  deliverWebhook,
  emitWebhookEvent,
  newKeyringSpec,
  parseKeyring,
  relayWebhookDeliveries,
  type WebhookDeliveryOptions,
  type WebhookWorkerDeps,
} from '@cubicle/control-plane';
import { createDb, newId, type Db } from '@cubicle/db';
import { createQueueConnection, JobQueues, startWorkers } from '@cubicle/queue';
import { createApiKey, createTenant } from '@cubicle/tenancy';
import type { Worker } from 'bullmq';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, createTestRedisNamespace } from '../../../test/harness/index.js';
import {
  startWebhookReceiver,
  type WebhookReceiver,
} from '../../../test/e2e/support/webhook-receiver.js';
import { buildApp } from '../src/app.js';
import { testAppOptions } from './app-options.js';

/**
 * Webhooks through the real API, PostgreSQL, Redis and BullMQ workers running the control
 * plane's delivery (the worker process's handlers) in this process: signatures checked by the
 * independent `standardwebhooks` package, retries, the address guard at create and at delivery.
 */
describe('webhooks', () => {
  let db: Db;
  let connection: Redis;
  let workerConnection: Redis;
  let queues: JobQueues;
  let strict: FastifyInstance; // the API as shipped: private addresses refused
  let lenient: FastifyInstance; // an operator allowed private addresses
  let workers: Worker[];
  let cleanup: () => Promise<void>;
  const keyring = parseKeyring(newKeyringSpec());
  // The delivery settings of the in-process worker; a test may tighten them for itself.
  const delivery: WebhookDeliveryOptions = {
    allowPrivate: true,
    timeoutMs: 2000,
    retry: { baseMs: 150, windowMs: 60_000, maxGapMs: 1000 },
  };
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    const database = await createTestDatabase();
    const ns = createTestRedisNamespace();
    db = createDb({ databaseUrl: database.url, maxConnections: 6 });
    connection = createQueueConnection(ns.url);
    workerConnection = createQueueConnection(ns.url);
    queues = new JobQueues(connection, ns.bullPrefix);
    const build = (allowPrivate: boolean) =>
      buildApp({
        db,
        redis: connection,
        queues,
        ...testAppOptions(ns.bullPrefix),
        keyVerifier: { cacheTtlMs: 0 },
        keyring,
        webhooks: { allowPrivate },
      });
    strict = await build(false);
    lenient = await build(true);
    const deps: WebhookWorkerDeps = { db, queues, keyring, webhooks: delivery };
    workers = startWorkers({
      connection: workerConnection,
      prefix: ns.bullPrefix,
      queues: ['webhooks'],
      handlers: {
        'webhook.deliver': (p) => deliverWebhook(deps, p.delivery_id, p.attempt),
        'webhooks.relay': () => relayWebhookDeliveries(deps),
      },
    });
    await queues.schedule('webhooks.relay', {}, 200);
    cleanup = async () => {
      await Promise.all(workers.map((w) => w.close()));
      await strict.close();
      await lenient.close();
      await queues.close();
      connection.disconnect();
      workerConnection.disconnect();
      await db.$disconnect();
      await ns.cleanup();
      await database.drop();
    };
  });
  afterEach(async () => {
    delivery.allowPrivate = true;
    for (const r of receivers.splice(0)) await r.close();
  });
  afterAll(async () => cleanup?.());

  async function tenant(name: string) {
    const t = await createTenant(db, { name });
    const admin = await createApiKey(db, { tenantId: t.id, name: 'admin', role: 'admin' });
    const member = await createApiKey(db, { tenantId: t.id, name: 'member', role: 'member' });
    return {
      id: t.id,
      auth: { authorization: `Bearer ${admin.key}` },
      member: { authorization: `Bearer ${member.key}` },
    };
  }
  type Tenant = Awaited<ReturnType<typeof tenant>>;

  async function receiver() {
    const r = await startWebhookReceiver();
    receivers.push(r);
    return r;
  }

  const call = (
    app: FastifyInstance,
    t: { auth: Record<string, string> },
    method: string,
    url: string,
    payload?: unknown,
  ) =>
    app.inject({
      method: method as 'GET',
      url,
      headers: t.auth,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });

  async function createEndpoint(
    t: Tenant,
    url: string,
    events = ['claim.activated', 'claim.ended'],
  ) {
    const res = await call(lenient, t, 'POST', '/v1/webhooks', { url, events });
    expect(res.statusCode, res.body).toBe(201);
    return WebhookWithSecret.parse(res.json());
  }

  /** A real claim lifecycle through the API on a pool with one warm sandbox (no desktop needed). */
  async function claimAndRelease(t: Tenant) {
    const pool = `p${Math.random().toString(36).slice(2, 8)}`;
    const put = await call(strict, t, 'PUT', `/v1/pools/${pool}`, {
      image: 'x',
      autoscaling: { min: 0, initial: 0, max: 1 },
    });
    expect(put.statusCode).toBe(201);
    await db.sandbox.create({
      data: {
        id: newId('sandbox'),
        tenantId: t.id,
        poolId: put.json().id,
        backend: 'local',
        image: 'x',
        generation: put.json().generation,
        state: 'warm',
        readyAt: new Date(),
      },
    });
    const claim = await call(strict, t, 'POST', `/v1/pools/${pool}/claims`, {
      metadata: { job: 'j-42' },
    });
    expect(claim.statusCode).toBe(201);
    const released = await call(strict, t, 'DELETE', `/v1/claims/${claim.json().id}`);
    expect(released.statusCode).toBe(200);
    return claim.json() as { id: string; sandbox: { id: string }; pool_id: string };
  }

  async function deliveriesOf(t: Tenant, webhookId: string) {
    const res = await call(strict, t, 'GET', `/v1/webhooks/${webhookId}/deliveries`);
    expect(res.statusCode).toBe(200);
    return listOf(WebhookDelivery).parse(res.json()).data;
  }

  async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 15_000) {
    const deadline = Date.now() + ms;
    for (;;) {
      const value = await read();
      if (done(value)) return value;
      if (Date.now() > deadline)
        throw new Error(`not reached within ${ms} ms: ${JSON.stringify(value)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('shows the signing secret once, stores it sealed, and never shows it again', async () => {
    const t = await tenant('once');
    const res = await call(strict, t, 'POST', '/v1/webhooks', {
      url: 'https://93.184.215.14/hooks',
      events: ['claim.ended'],
      description: 'job queue',
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const created = WebhookWithSecret.parse(res.json());
    expect(created).toMatchObject({
      url: 'https://93.184.215.14/hooks',
      events: ['claim.ended'],
      description: 'job queue',
      enabled: true,
    });
    const secretPart = created.secret.slice('whsec_'.length);

    const got = await call(strict, t, 'GET', `/v1/webhooks/${created.id}`);
    expect(Webhook.parse(got.json())).toEqual({ ...created, secret: undefined });
    const listed = await call(strict, t, 'GET', '/v1/webhooks');
    expect(
      listOf(Webhook)
        .parse(listed.json())
        .data.map((w) => w.id),
    ).toEqual([created.id]);
    for (const body of [got.body, listed.body]) expect(body).not.toContain(secretPart);

    // At rest: sealed bytes only, in no form a dump shows.
    const dump = JSON.stringify(
      await db.$queryRaw`SELECT *, encode(secret_ciphertext, 'base64') AS b64, encode(secret_ciphertext, 'escape') AS raw FROM webhook_endpoints`,
      (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v),
    );
    expect(dump).not.toContain(secretPart);
    expect(dump).not.toContain(created.secret);

    // Update changes what is given; the secret stays the same (rotation is its own call).
    const patched = await call(strict, t, 'PATCH', `/v1/webhooks/${created.id}`, {
      events: ['claim.ended', 'run.finished'],
      description: null,
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({
      events: ['claim.ended', 'run.finished'],
      description: null,
      url: created.url,
    });
    expect(patched.body).not.toContain(secretPart);
  });

  it('refuses private, loopback, link-local, unique-local and unspecified destinations with 400, changing nothing', async () => {
    const t = await tenant('guard');
    const recv = await receiver();
    for (const url of [
      recv.url,
      recv.localhostUrl, // a name: refused after DNS resolution
      'http://169.254.169.254/latest/meta-data',
      'http://10.0.0.7/hook',
      'http://192.168.1.10/hook',
      'http://[::1]:8080/hook',
      'http://[fd00::1]/hook',
      'http://[fe80::1]/hook',
      'http://0.0.0.0/hook',
      'http://[::ffff:127.0.0.1]/hook',
      // IPv4 inside IPv6: NAT64 (well-known, local-use), 6to4, Teredo, SIIT.
      'http://[64:ff9b::a9fe:a9fe]/hook',
      'http://[64:ff9b:1::a00:7]/hook',
      'http://[2002:a9fe:a9fe::1]/hook',
      'http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook',
      'http://[::ffff:0:a00:7]/hook',
    ]) {
      const res = await call(strict, t, 'POST', '/v1/webhooks', { url, events: ['claim.ended'] });
      expect(res.statusCode, url).toBe(400);
      expect(res.json().error.code, url).toBe('webhook_url_refused');
    }
    // A refused name never tells what it resolved to.
    const named = await call(strict, t, 'POST', '/v1/webhooks', {
      url: recv.localhostUrl,
      events: ['claim.ended'],
    });
    expect(named.json().error.details).toEqual({ host: 'localhost', reason: 'loopback' });
    expect(named.body).not.toMatch(/127\.0\.0\.1|::1\b/);
    const bad = [
      { url: 'ftp://93.184.215.14/x', events: ['claim.ended'] },
      { url: 'https://user:pw@93.184.215.14/x', events: ['claim.ended'] },
      { url: 'not a url', events: ['claim.ended'] },
      { url: 'https://93.184.215.14/x', events: [] },
      { url: 'https://93.184.215.14/x', events: ['claim.exploded'] },
      { url: 'https://93.184.215.14/x', events: ['claim.ended', 'claim.ended'] },
      { url: 'https://93.184.215.14/x', events: ['claim.ended'], secret: 'mine' },
    ];
    for (const body of bad) {
      const res = await call(strict, t, 'POST', '/v1/webhooks', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().error.code).toBe('validation_failed');
    }
    // A PATCH to a refused URL is refused too, and the endpoint keeps its URL.
    const ok = await createEndpoint(t, 'https://93.184.215.14/x');
    const patch = await call(strict, t, 'PATCH', `/v1/webhooks/${ok.id}`, { url: recv.url });
    expect(patch.statusCode).toBe(400);
    expect(patch.json().error.code).toBe('webhook_url_refused');
    expect(await db.webhookEndpoint.count({ where: { tenantId: t.id } })).toBe(1);
    expect((await db.webhookEndpoint.findUniqueOrThrow({ where: { id: ok.id } })).url).toBe(
      'https://93.184.215.14/x',
    );
    // The operator's setting lets a loopback receiver in.
    expect(
      (await call(lenient, t, 'POST', '/v1/webhooks', { url: recv.url, events: ['claim.ended'] }))
        .statusCode,
    ).toBe(201);
  });

  it('needs an admin key, and another tenant cannot see or touch an endpoint (404)', async () => {
    const owner = await tenant('owner');
    const other = await tenant('other');
    const hook = await createEndpoint(owner, 'https://93.184.215.14/x');
    const member = await strict.inject({
      method: 'GET',
      url: '/v1/webhooks',
      headers: owner.member,
    });
    expect(member.statusCode).toBe(403);
    for (const [method, url, payload] of [
      ['GET', `/v1/webhooks/${hook.id}`],
      ['PATCH', `/v1/webhooks/${hook.id}`, { enabled: false }],
      ['DELETE', `/v1/webhooks/${hook.id}`],
      ['POST', `/v1/webhooks/${hook.id}/rotate-secret`],
      ['GET', `/v1/webhooks/${hook.id}/deliveries`],
    ] as const) {
      const res = await call(strict, other, method, url, payload);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json().error.code).toBe('not_found');
    }
    expect(
      listOf(Webhook).parse((await call(strict, other, 'GET', '/v1/webhooks')).json()).data,
    ).toEqual([]);
    const row = await db.webhookEndpoint.findUniqueOrThrow({ where: { id: hook.id } });
    expect(row.enabled).toBe(true);
    expect(Buffer.from(row.secretCiphertext).length).toBeGreaterThan(0);
    // The owner still has it, unchanged.
    expect((await call(strict, owner, 'GET', `/v1/webhooks/${hook.id}`)).json()).toEqual({
      ...hook,
      secret: undefined,
    });
  });

  it('delivers claim.activated and claim.ended of a real claim, signed (verified by standardwebhooks)', async () => {
    const t = await tenant('signed');
    const recv = await receiver();
    const hook = await createEndpoint(t, recv.url);
    const claim = await claimAndRelease(t);

    const [activated] = await recv.waitFor(1, (w) => w.payload.type === 'claim.activated');
    const [ended] = await recv.waitFor(1, (w) => w.payload.type === 'claim.ended');
    for (const w of [activated!, ended!]) {
      expect(recv.verify(w, hook.secret)).toEqual(JSON.parse(w.body));
      expect(WebhookPayload.parse(JSON.parse(w.body))).toBeTruthy();
      expect(w.headers['content-type']).toBe('application/json');
      expect(w.headers['webhook-id']).toMatch(/^msg_/);
      expect(Math.abs(Number(w.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    }
    expect(activated!.payload.data).toEqual({
      claim_id: claim.id,
      name: expect.any(String),
      pool: expect.any(String),
      pool_id: claim.pool_id,
      sandbox_id: claim.sandbox.id,
      metadata: { job: 'j-42' },
    });
    expect(ended!.payload.data).toEqual({
      claim_id: claim.id,
      name: (activated!.payload.data as { name: string }).name,
      pool: (activated!.payload.data as { pool: string }).pool,
      pool_id: claim.pool_id,
      sandbox_id: claim.sandbox.id,
      metadata: { job: 'j-42' },
      reason: 'released_by_client',
    });
    // A wrong secret or a changed body fails verification.
    const other = await createEndpoint(t, 'https://93.184.215.14/other', ['sandbox.failed']);
    expect(() => recv.verify(ended!, other.secret)).toThrow();
    expect(() =>
      recv.verify(
        { ...ended!, body: ended!.body.replace('released_by_client', 'ttl_expired') },
        hook.secret,
      ),
    ).toThrow();

    const deliveries = await until(
      () => deliveriesOf(t, hook.id),
      (d) => d.length === 2 && d.every((x) => x.status === 'delivered'),
    );
    expect(deliveries.map((d) => d.event_type).sort()).toEqual(['claim.activated', 'claim.ended']);
    for (const d of deliveries) {
      expect(d).toMatchObject({ attempt_count: 1, last_status_code: 200, next_attempt_at: null });
      expect(d.attempts).toEqual([
        expect.objectContaining({
          attempt: 1,
          status_code: 200,
          error: null,
          response_excerpt: 'ok',
        }),
      ]);
    }
    // The endpoint subscribed to sandbox.failed only got nothing.
    expect(await deliveriesOf(t, other.id)).toEqual([]);
  });

  it('emitWebhookEvent (how a run end is announced) reaches only subscribed endpoints', async () => {
    const t = await tenant('runs');
    const recv = await receiver();
    const hook = await createEndpoint(t, recv.url, ['run.finished']);
    await createEndpoint(t, 'https://93.184.215.14/claims-only', ['claim.ended']);
    const data = {
      run_id: newId('run'),
      claim_id: newId('claim'),
      status: 'failed' as const,
      exit_code: 3,
      reason: 'exited',
    };
    const deps = { db, queues };
    const ids = await emitWebhookEvent(deps, t.id, 'run.finished', data);
    expect(ids).toHaveLength(1);
    const [w] = await recv.waitFor(1);
    expect(recv.verify(w!, hook.secret)).toMatchObject({ type: 'run.finished', data });
    // Nobody listens to sandbox.failed here: nothing is recorded.
    expect(await emitWebhookEvent(deps, t.id, 'sandbox.failed', async () => null)).toEqual([]);
    expect(await db.webhookDelivery.count({ where: { tenantId: t.id } })).toBe(1);
  });

  it('retries a receiver that fails twice; the third attempt delivers, with the same webhook-id', async () => {
    const t = await tenant('retry');
    const recv = await receiver();
    // Failing answers carry a large body: only a short excerpt is kept.
    recv.answer((n) => (n <= 2 ? { status: 503, body: 'x'.repeat(5000) } : { status: 204 }));
    const hook = await createEndpoint(t, recv.url, ['claim.activated']);
    await claimAndRelease(t);

    const got = await recv.waitFor(3);
    expect(new Set(got.map((w) => w.headers['webhook-id'])).size).toBe(1);
    for (const w of got) expect(recv.verify(w, hook.secret)).toBeTruthy();
    const [d] = await until(
      () => deliveriesOf(t, hook.id),
      (list) => list[0]?.status === 'delivered',
    );
    expect(d).toMatchObject({ status: 'delivered', attempt_count: 3, last_status_code: 204 });
    expect(d!.attempts.map((a) => a.status_code)).toEqual([503, 503, 204]);
    expect(d!.attempts[0]!.response_excerpt!.length).toBeLessThanOrEqual(1024);
    expect(d!.attempts[0]!.error).toBe('answered 503');
    // Backoff: the second gap is about twice the first (150 ms base, doubling).
    const at = d!.attempts.map((a) => new Date(a.at).getTime());
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(150);
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(300);
    // Pending while it retries, the list showed when the next attempt is due; now nothing is.
    expect(d!.next_attempt_at).toBeNull();
    expect(recv.received).toHaveLength(3);
  });

  it('shows a pending delivery with its next attempt, and gives up when the retry window ends', async () => {
    const t = await tenant('giveup');
    const recv = await receiver();
    recv.answer(() => 'hang');
    delivery.timeoutMs = 300;
    try {
      const hook = await createEndpoint(t, recv.url, ['claim.activated']);
      await claimAndRelease(t);
      const [pending] = await until(
        () => deliveriesOf(t, hook.id),
        (list) => (list[0]?.attempt_count ?? 0) >= 1 && list[0]?.status === 'pending',
      );
      expect(pending!.next_attempt_at).not.toBeNull();
      expect(pending!.attempts[0]).toMatchObject({
        status_code: null,
        error: 'no answer within 300 ms',
      });
      // Move the event back in time: the next attempt falls outside the window and it fails.
      await db.webhookDelivery.updateMany({
        where: { webhookId: hook.id },
        data: { createdAt: new Date(Date.now() - 3600_000) },
      });
      const [failed] = await until(
        () => deliveriesOf(t, hook.id),
        (list) => list[0]?.status === 'failed',
      );
      expect(failed!.next_attempt_at).toBeNull();
      expect(failed!.last_error).toMatch(/no answer within 300 ms; retries ended/);
      expect(failed!.finished_at).not.toBeNull();
    } finally {
      delivery.timeoutMs = 2000;
    }
  });

  it('refuses at delivery time a name that resolves to loopback (after DNS resolution), without retrying', async () => {
    const t = await tenant('rebind');
    const recv = await receiver();
    // Created while the API allowed it (or before the name changed); the worker does not.
    const hook = await createEndpoint(t, recv.localhostUrl, ['claim.activated']);
    delivery.allowPrivate = false;
    await claimAndRelease(t);
    const [d] = await until(
      () => deliveriesOf(t, hook.id),
      (list) => list[0]?.status === 'failed',
    );
    expect(d!.attempt_count).toBe(1);
    expect(d!.last_error).toMatch(
      /localhost resolves to an address webhooks may not reach \(loopback\)/,
    );
    expect(d!.last_error).not.toMatch(/127\.0\.0\.1|::1\b/);
    expect(d!.attempts[0]).toMatchObject({ status_code: null });
    await new Promise((r) => setTimeout(r, 500));
    expect(recv.received).toEqual([]);
  });

  it('rotates the secret: new deliveries verify with the new secret and, for 24 h, the old one', async () => {
    const t = await tenant('rotate');
    const recv = await receiver();
    const hook = await createEndpoint(t, recv.url, ['claim.activated']);
    const rotated = await call(strict, t, 'POST', `/v1/webhooks/${hook.id}/rotate-secret`);
    expect(rotated.statusCode).toBe(200);
    expect(rotated.headers['cache-control']).toBe('no-store');
    const fresh = WebhookWithSecret.parse(rotated.json());
    expect(fresh.secret).not.toBe(hook.secret);
    await claimAndRelease(t);
    const [w] = await recv.waitFor(1);
    expect(w!.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(recv.verify(w!, fresh.secret)).toBeTruthy();
    expect(recv.verify(w!, hook.secret)).toBeTruthy();
    // Both calls are audited, by action and endpoint id, and the audit log holds no secret.
    const audited = await until(
      () => db.auditEvent.findMany({ where: { tenantId: t.id, targetId: hook.id } }),
      (rows) => rows.length === 2,
    );
    expect(audited.map((a) => a.action).sort()).toEqual([
      'webhook.create',
      'webhook.rotate_secret',
    ]);
    const log = JSON.stringify(audited);
    for (const secret of [hook.secret, fresh.secret]) expect(log).not.toContain(secret.slice(6));
  });

  it('a disabled endpoint gets no new events; a deleted one is gone with its deliveries', async () => {
    const t = await tenant('lifecycle');
    const recv = await receiver();
    const hook = await createEndpoint(t, recv.url, ['claim.activated', 'claim.ended']);
    expect(
      (await call(strict, t, 'PATCH', `/v1/webhooks/${hook.id}`, { enabled: false })).json()
        .enabled,
    ).toBe(false);
    await claimAndRelease(t);
    await new Promise((r) => setTimeout(r, 600));
    expect(recv.received).toEqual([]);
    expect(await deliveriesOf(t, hook.id)).toEqual([]);

    await call(strict, t, 'PATCH', `/v1/webhooks/${hook.id}`, { enabled: true });
    await claimAndRelease(t);
    await recv.waitFor(2);
    expect((await call(strict, t, 'DELETE', `/v1/webhooks/${hook.id}`)).statusCode).toBe(204);
    expect((await call(strict, t, 'GET', `/v1/webhooks/${hook.id}`)).statusCode).toBe(404);
    expect((await call(strict, t, 'DELETE', `/v1/webhooks/${hook.id}`)).statusCode).toBe(404);
    expect(await db.webhookDelivery.count({ where: { webhookId: hook.id } })).toBe(0);
  });
});
