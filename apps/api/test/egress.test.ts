import {
  ClaimEgress,
  EgressEventList,
  listOf,
  Pool,
  WebhookDelivery,
  WebhookWithSecret,
  type EgressChange,
} from '@cubicle/contract/api';
import {
  egressPolicySource,
  ingestEgressDenials,
  loadSandboxEgress,
  type Resources,
} from '@cubicle/control-plane';
import { createDb, newId, type Db } from '@cubicle/db';
import { decideConnection, type EgressDenialReport } from '@cubicle/egress';
import { createQueueConnection, JobQueues } from '@cubicle/queue';
import { createApiKey, createTenant } from '@cubicle/tenancy';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, createTestRedisNamespace } from '../../../test/harness/index.js';
import { buildApp } from '../src/app.js';
import { testAppOptions } from './app-options.js';

/**
 * Egress through the real API, PostgreSQL and Redis: pool and claim policies validated and
 * narrowed, the effective policy the egress point loads (and its change message), and the
 * point's denial reports collapsed into events, paged, pushed to webhooks and audit — each
 * tenant seeing only its own.
 */
describe('egress', () => {
  let db: Db;
  let connection: Redis;
  let subscriber: Redis;
  let queues: JobQueues;
  let app: FastifyInstance;
  let deps: Resources;
  let prefix: string;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const database = await createTestDatabase();
    const ns = createTestRedisNamespace();
    prefix = ns.bullPrefix;
    db = createDb({ databaseUrl: database.url, maxConnections: 6 });
    connection = createQueueConnection(ns.url);
    subscriber = createQueueConnection(ns.url);
    queues = new JobQueues(connection, ns.bullPrefix);
    app = await buildApp({
      db,
      redis: connection,
      queues,
      ...testAppOptions(ns.bullPrefix),
      keyVerifier: { cacheTtlMs: 0 },
      webhooks: { allowPrivate: true },
      egress: { default: 'none', operator: { allow: ['10.20.0.0/16'] } },
    });
    deps = app.resources;
    cleanup = async () => {
      await app.close();
      await queues.close();
      connection.disconnect();
      subscriber.disconnect();
      await db.$disconnect();
      await ns.cleanup();
      await database.drop();
    };
  });
  afterAll(async () => cleanup?.());

  async function tenant(name: string) {
    const t = await createTenant(db, { name });
    const admin = await createApiKey(db, { tenantId: t.id, name: 'admin', role: 'admin' });
    return { id: t.id, auth: { authorization: `Bearer ${admin.key}` } };
  }
  type Tenant = Awaited<ReturnType<typeof tenant>>;

  const call = (t: Tenant, method: string, url: string, payload?: unknown) =>
    app.inject({
      method: method as 'GET',
      url,
      headers: t.auth,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });

  async function poolWithWarmSandbox(t: Tenant, egress: unknown) {
    const name = `p${Math.random().toString(36).slice(2, 8)}`;
    const put = await call(t, 'PUT', `/v1/pools/${name}`, {
      image: 'x',
      autoscaling: { min: 0, initial: 0, max: 2 },
      ...(egress === undefined ? {} : { egress }),
    });
    expect(put.statusCode, put.body).toBe(201);
    const pool = Pool.parse(put.json());
    const sandboxId = newId('sandbox');
    await db.sandbox.create({
      data: {
        id: sandboxId,
        tenantId: t.id,
        poolId: pool.id,
        backend: 'local',
        backendRef: `desk-${sandboxId.slice(-6)}`,
        image: 'x',
        generation: pool.generation,
        state: 'warm',
        readyAt: new Date(),
      },
    });
    return { name, pool, sandboxId };
  }

  const ALLOWLIST = {
    mode: 'allowlist',
    allow: ['*.example.test:443', '203.0.113.0/24'],
    deny: ['ads.example.test'],
  };

  it('stores a pool policy, answers null for the installation default, and refuses malformed rules', async () => {
    const t = await tenant('pools');
    const { name, pool } = await poolWithWarmSandbox(t, ALLOWLIST);
    expect(pool.egress).toEqual(ALLOWLIST);
    const plain = await poolWithWarmSandbox(t, undefined);
    expect(plain.pool.egress).toBeNull();

    const bad = await call(t, 'PUT', `/v1/pools/${name}`, {
      image: 'x',
      egress: { mode: 'allowlist', allow: ['ok.example.test', 'http://nope'] },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('validation_failed');
    expect(JSON.stringify(bad.json().error.details)).toContain('egress');
    const badMode = await call(t, 'PUT', `/v1/pools/${name}`, {
      image: 'x',
      egress: { mode: 'all' },
    });
    expect(badMode.statusCode).toBe(400);

    // A policy change reaches running sandboxes; it never rolls warm ones (same generation).
    const opened = await call(t, 'PUT', `/v1/pools/${name}`, {
      image: 'x',
      autoscaling: { min: 0, initial: 0, max: 2 },
      egress: { mode: 'open' },
    });
    expect(opened.statusCode).toBe(200);
    expect(Pool.parse(opened.json())).toMatchObject({
      egress: { mode: 'open', allow: [], deny: [] },
      generation: pool.generation,
    });
  });

  it('refuses a claim that widens its pool and takes nothing', async () => {
    const t = await tenant('widen');
    const { name, sandboxId } = await poolWithWarmSandbox(t, ALLOWLIST);
    const wider = await call(t, 'POST', `/v1/pools/${name}/claims`, { egress: { mode: 'open' } });
    expect(wider.statusCode).toBe(422);
    expect(wider.json().error).toMatchObject({
      code: 'egress_widens_pool',
      details: { field: 'egress.mode', pool_mode: 'allowlist', claim_mode: 'open' },
    });
    const outside = await call(t, 'POST', `/v1/pools/${name}/claims`, {
      egress: { allow: ['api.example.test:443', 'api.example.test:80'] },
    });
    expect(outside.statusCode).toBe(422);
    expect(outside.json().error.details).toMatchObject({
      field: 'egress.allow[1]',
      rule: 'api.example.test:80',
    });
    // The installation default (none here) counts as the pool's policy.
    const closed = await poolWithWarmSandbox(t, undefined);
    const fromNone = await call(t, 'POST', `/v1/pools/${closed.name}/claims`, {
      egress: { allow: ['x.example.test'] },
    });
    expect(fromNone.statusCode).toBe(422);
    expect((await db.sandbox.findUniqueOrThrow({ where: { id: sandboxId } })).state).toBe('warm');
    expect(await db.claim.count({ where: { tenantId: t.id } })).toBe(0);
  });

  it('narrows a claim, shows its effective policy and gives the egress point the same', async () => {
    const t = await tenant('narrow');
    const { name, pool, sandboxId } = await poolWithWarmSandbox(t, ALLOWLIST);
    const claim = await call(t, 'POST', `/v1/pools/${name}/claims`, {
      egress: { allow: ['api.example.test:443'], deny: ['203.0.113.9'] },
    });
    expect(claim.statusCode, claim.body).toBe(201);
    const claimId = claim.json().id as string;
    const view = ClaimEgress.parse((await call(t, 'GET', `/v1/claims/${claimId}/egress`)).json());
    expect(view.narrowing).toEqual({ allow: ['api.example.test:443'], deny: ['203.0.113.9'] });
    expect(view.effective).toEqual({
      mode: 'allowlist',
      mode_source: 'pool',
      allow: [{ rule: 'api.example.test:443', source: 'claim', index: 0 }],
      deny: [
        { rule: 'ads.example.test', source: 'pool', index: 0 },
        { rule: '203.0.113.9', source: 'claim', index: 0 },
      ],
      operator_allow: ['10.20.0.0/16'],
      host_addresses: [],
    });
    const loaded = await loadSandboxEgress(deps, sandboxId);
    expect(loaded).toMatchObject({ claimId, poolId: pool.id, tenantId: t.id });
    expect(loaded?.policy).toEqual(view.effective);
    expect(loaded?.backendRef).toMatch(/^desk-/);

    // A pool change reaches a subscribed point within a second, and the reload differs.
    const source = egressPolicySource({ db, subscriber, prefix });
    const heard: EgressChange[] = [];
    const unsubscribe = await source.subscribe((c) => heard.push(c));
    const started = Date.now();
    const put = await call(t, 'PUT', `/v1/pools/${name}`, {
      image: 'x',
      autoscaling: { min: 0, initial: 0, max: 2 },
      egress: { ...ALLOWLIST, deny: ['ads.example.test', 'tracker.example.test'] },
    });
    expect(put.statusCode).toBe(200);
    while (heard.length === 0 && Date.now() - started < 1000)
      await new Promise((r) => setTimeout(r, 10));
    expect(heard).toEqual([{ pool_id: pool.id }]);
    const reloaded = await source.load(sandboxId);
    expect(reloaded?.version).not.toBe(loaded?.version);
    expect(reloaded?.policy.deny.map((d) => d.rule)).toContain('tracker.example.test');
    await unsubscribe();
  });

  const report = (
    sandboxId: string,
    over: Partial<EgressDenialReport> = {},
  ): EgressDenialReport => ({
    sandboxId,
    protocol: 'tcp',
    name: 'ads.example.test',
    ip: '198.51.100.7',
    port: 443,
    rule: 'pool.deny[0]: ads.example.test',
    process: 'curl',
    count: 1,
    firstAt: new Date(),
    lastAt: new Date(),
    ...over,
  });

  it('collapses denials per destination and minute, pages them, and announces each line once', async () => {
    const t = await tenant('events');
    const hook = await call(t, 'POST', '/v1/webhooks', {
      url: 'http://127.0.0.1:9/hooks',
      events: ['egress.denied'],
    });
    expect(hook.statusCode, hook.body).toBe(201);
    const webhook = WebhookWithSecret.parse(hook.json());
    const { name, sandboxId } = await poolWithWarmSandbox(t, ALLOWLIST);
    const claim = await call(t, 'POST', `/v1/pools/${name}/claims`, {});
    const claimId = claim.json().id as string;

    // A retry loop over two batches, a second destination, and an allowed connection.
    const at = new Date(Math.floor(Date.now() / 60_000) * 60_000 + 1000);
    await ingestEgressDenials(deps, [
      report(sandboxId, { count: 3, firstAt: at, lastAt: new Date(at.getTime() + 300) }),
      report(sandboxId, {
        count: 1,
        firstAt: new Date(at.getTime() + 400),
        lastAt: new Date(at.getTime() + 400),
      }),
      report(sandboxId, {
        name: null,
        ip: '10.0.0.5',
        port: 22,
        rule: 'operator:private-ranges',
        firstAt: at,
        lastAt: at,
      }),
      report(sandboxId, {
        verdict: 'allowed',
        name: 'api.example.test',
        rule: 'pool.allow[0]: *.example.test:443',
        firstAt: at,
        lastAt: at,
      }),
    ]);
    const second = await ingestEgressDenials(deps, [
      report(sandboxId, {
        count: 2,
        firstAt: new Date(at.getTime() + 2000),
        lastAt: new Date(at.getTime() + 2500),
      }),
    ]);
    expect(second).toEqual({ stored: 1, announced: 0, unclaimed: 0 });

    const page = EgressEventList.parse(
      (await call(t, 'GET', `/v1/claims/${claimId}/egress-events`)).json(),
    );
    expect(page.next_cursor).toBeNull();
    expect(page.data).toHaveLength(2);
    const ads = page.data.find((e) => e.name === 'ads.example.test')!;
    expect(ads).toMatchObject({
      type: 'egress.denied',
      claim_id: claimId,
      count: 6,
      ip: '198.51.100.7',
      port: 443,
      protocol: 'tcp',
      rule: 'pool.deny[0]: ads.example.test',
      process: 'curl',
      minute: new Date(Math.floor(at.getTime() / 60_000) * 60_000).toISOString(),
      first_at: at.toISOString(),
      last_at: new Date(at.getTime() + 2500).toISOString(),
    });
    expect(page.data.find((e) => e.rule === 'operator:private-ranges')).toMatchObject({
      name: null,
      ip: '10.0.0.5',
      count: 1,
    });

    // Paged like other lists: newest first, the cursor is the last id.
    const first = EgressEventList.parse(
      (await call(t, 'GET', `/v1/claims/${claimId}/egress-events?limit=1`)).json(),
    );
    expect(first.data).toHaveLength(1);
    const rest = EgressEventList.parse(
      (
        await call(
          t,
          'GET',
          `/v1/claims/${claimId}/egress-events?limit=1&cursor=${first.next_cursor}`,
        )
      ).json(),
    );
    expect(rest.data).toHaveLength(1);
    expect(rest.next_cursor).toBeNull();
    expect(new Set([...first.data, ...rest.data].map((e) => e.id)).size).toBe(2);

    // The Network tab's destinations: denied and allowed, with counts.
    const view = ClaimEgress.parse((await call(t, 'GET', `/v1/claims/${claimId}/egress`)).json());
    expect(view.destinations).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ verdict: 'denied', name: 'ads.example.test', count: 6 }),
        expect.objectContaining({ verdict: 'allowed', name: 'api.example.test', count: 1 }),
      ]),
    );

    // One webhook and one audit event per line, not per denial.
    const deliveries = listOf(WebhookDelivery).parse(
      (await call(t, 'GET', `/v1/webhooks/${webhook.id}/deliveries`)).json(),
    ).data;
    expect(deliveries.map((d) => d.event_type)).toEqual(['egress.denied', 'egress.denied']);
    const body = await db.webhookDelivery.findFirstOrThrow({ where: { id: deliveries[0]!.id } });
    expect(JSON.parse(body.body as string)).toMatchObject({
      type: 'egress.denied',
      data: { claim_id: claimId, sandbox_id: sandboxId },
    });
    const audits = await db.auditEvent.findMany({
      where: { tenantId: t.id, action: 'egress.denied' },
    });
    expect(audits).toHaveLength(2);
    expect(audits[0]).toMatchObject({
      actorType: 'system',
      targetType: 'claim',
      targetId: claimId,
    });
  });

  it('allowing a denied destination for the pool is an audited PUT that the running claim gets', async () => {
    const t = await tenant('allow');
    const { name, sandboxId } = await poolWithWarmSandbox(t, { mode: 'none' });
    const claimId = (await call(t, 'POST', `/v1/pools/${name}/claims`, {})).json().id as string;
    const attempt = {
      name: 'api.example.test',
      ip: '198.51.100.20',
      port: 443,
      protocol: 'tcp' as const,
    };
    const before = await loadSandboxEgress(deps, sandboxId);
    expect(decideConnection(before!.policy, attempt)).toEqual({
      allowed: false,
      rule: 'default:none',
    });

    // The dashboard's one step: the pool as the API describes it, back with the rule added.
    const pool = Pool.parse((await call(t, 'GET', `/v1/pools/${name}`)).json());
    const source = egressPolicySource({ db, subscriber, prefix });
    const heard: EgressChange[] = [];
    const unsubscribe = await source.subscribe((c) => heard.push(c));
    const put = await call(t, 'PUT', `/v1/pools/${name}`, {
      image: pool.image,
      autoscaling: pool.autoscaling,
      egress: { mode: 'allowlist', allow: ['api.example.test:443'], deny: [] },
    });
    expect(put.statusCode, put.body).toBe(200);
    const started = Date.now();
    while (
      !heard.some((c) => 'pool_id' in c && c.pool_id === pool.id) &&
      Date.now() - started < 1000
    )
      await new Promise((r) => setTimeout(r, 10));
    expect(heard).toContainEqual({ pool_id: pool.id });
    const after = await source.load(sandboxId);
    expect(after?.claimId).toBe(claimId);
    expect(decideConnection(after!.policy, attempt)).toEqual({
      allowed: true,
      rule: 'pool.allow[0]: api.example.test:443',
    });
    await unsubscribe();
    await app.auditSettled?.();
    const audit = await db.auditEvent.findFirst({
      where: { tenantId: t.id, action: 'pool.apply', targetId: pool.id },
      orderBy: { createdAt: 'desc' },
    });
    expect(audit).toMatchObject({ result: 'success', statusCode: 200 });
  });

  it("streams a claim's denials live as Server-Sent Events", async () => {
    const t = await tenant('stream');
    const { name, sandboxId } = await poolWithWarmSandbox(t, ALLOWLIST);
    const claimId = (await call(t, 'POST', `/v1/pools/${name}/claims`, {})).json().id as string;
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const res = await fetch(`${address}/v1/claims/${claimId}/egress-events/stream`, {
      headers: t.auth,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = res.body!.getReader();
    // The stream subscribes before answering; a report now reaches it.
    await new Promise((r) => setTimeout(r, 100));
    await ingestEgressDenials(deps, [report(sandboxId, { name: 'live.example.test', count: 2 })]);
    let text = '';
    const deadline = Date.now() + 5000;
    while (!text.includes('\n\n') && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
      text = text.replace(/^: keepalive\n\n/gm, '');
    }
    await reader.cancel();
    expect(text).toMatch(/^id: egv_[0-9a-z]{26}\nevent: egress.denied\ndata: /);
    const data = JSON.parse(text.split('data: ')[1]!.split('\n')[0]!);
    expect(data).toMatchObject({ claim_id: claimId, name: 'live.example.test', count: 2 });
  });

  it("ends a released claim's stream at once with event: end", async () => {
    const t = await tenant('ended');
    const { name } = await poolWithWarmSandbox(t, ALLOWLIST);
    const claimId = (await call(t, 'POST', `/v1/pools/${name}/claims`, {})).json().id as string;
    expect((await call(t, 'DELETE', `/v1/claims/${claimId}`)).statusCode).toBe(200);
    const res = await call(t, 'GET', `/v1/claims/${claimId}/egress-events/stream`);
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('event: end\ndata: {}\n\n');
  });

  it('drops reports of sandboxes no claim holds', async () => {
    const t = await tenant('warm');
    const { sandboxId } = await poolWithWarmSandbox(t, ALLOWLIST);
    expect(await ingestEgressDenials(deps, [report(sandboxId, { count: 4 })])).toEqual({
      stored: 0,
      announced: 0,
      unclaimed: 4,
    });
  });

  it("answers 404 for another tenant's claim", async () => {
    const owner = await tenant('owner');
    const other = await tenant('other');
    const { name } = await poolWithWarmSandbox(owner, ALLOWLIST);
    const claimId = (await call(owner, 'POST', `/v1/pools/${name}/claims`, {})).json().id as string;
    for (const path of ['egress', 'egress-events', 'egress-events/stream']) {
      const res = await call(other, 'GET', `/v1/claims/${claimId}/${path}`);
      expect(res.statusCode, path).toBe(404);
      expect(res.json().error.code).toBe('not_found');
    }
    expect((await call(owner, 'GET', `/v1/claims/${claimId}/egress-events`)).statusCode).toBe(200);
  });
});
