import { Routes, toFastifyPath, type RouteDef } from '@cubicle/contract/api';
import { ErrorCodeList } from '@cubicle/contract/errors';
import { newKeyringSpec, parseKeyring } from '@cubicle/control-plane';
import { createDb, newId, type Db } from '@cubicle/db';
import { createQueueConnection, JobQueues } from '@cubicle/queue';
import { createApiKey, createTenant } from '@cubicle/tenancy';
import { generateViewerKeySet, parseViewerKeys } from '@cubicle/viewer';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, createTestRedisNamespace } from '../../../test/harness/index.js';
import { buildApp } from '../src/app.js';

/**
 * Every implemented endpoint, driven from the contract's route table: tenant B's key on tenant
 * A's resources is 404, and bad input is a 4xx with a known code that changes nothing.
 */
describe('tenant isolation and bad input on every endpoint', () => {
  let db: Db;
  let app: FastifyInstance;
  let queues: JobQueues;
  let connection: Redis;
  let cleanup: () => Promise<void>;
  const a = {
    tenantId: '',
    auth: '',
    keyId: '',
    claimId: '',
    poolName: 'alpha',
    ticketId: '',
    mcpTokenId: '',
    handoffId: '',
    snapshotId: '',
    replayLinkId: '',
    profileName: 'alpha-user',
  };
  const b = { auth: '' };

  beforeAll(async () => {
    const database = await createTestDatabase();
    const ns = createTestRedisNamespace();
    db = createDb({ databaseUrl: database.url, maxConnections: 5 });
    connection = createQueueConnection(ns.url);
    queues = new JobQueues(connection, ns.bullPrefix);
    app = await buildApp({
      db,
      redis: connection,
      queues,
      queuePrefix: ns.bullPrefix,
      keyVerifier: { cacheTtlMs: 0 },
      viewer: { keys: parseViewerKeys(generateViewerKeySet()), webUrl: 'https://web.test' },
      // Mounts the secret routes (and webhooks): they are checked like every other route.
      keyring: parseKeyring(newKeyringSpec()),
    });
    const ta = await createTenant(db, { name: 'A' });
    const tb = await createTenant(db, { name: 'B' });
    const ka = await createApiKey(db, { tenantId: ta.id, name: 'a', role: 'admin' });
    const kb = await createApiKey(db, { tenantId: tb.id, name: 'b', role: 'admin' });
    Object.assign(a, { tenantId: ta.id, auth: `Bearer ${ka.key}`, keyId: ka.id });
    b.auth = `Bearer ${kb.key}`;
    // A pool with no capacity, so the claim stays pending and no desktop is needed.
    expect(
      (
        await app.inject({
          method: 'PUT',
          url: '/v1/pools/alpha',
          headers: { authorization: a.auth },
          payload: { image: 'x', autoscaling: { min: 0, initial: 0, max: 1 } },
        })
      ).statusCode,
    ).toBe(201);
    const claim = await app.inject({
      method: 'POST',
      url: '/v1/pools/alpha/claims',
      headers: { authorization: a.auth },
      payload: { wait_seconds: 0 },
    });
    expect(claim.statusCode).toBe(202);
    a.claimId = claim.json().id;
    // A viewer ticket of A's (stored as minting leaves it), for the ticket routes.
    const pool = await db.pool.findFirstOrThrow({ where: { tenantId: ta.id, name: 'alpha' } });
    const sandbox = await db.sandbox.create({
      data: {
        id: newId('sandbox'),
        tenantId: ta.id,
        poolId: pool.id,
        backend: 'local',
        image: 'x',
        generation: 1,
      },
    });
    a.ticketId = newId('viewer_ticket');
    await db.viewerTicket.create({
      data: {
        id: a.ticketId,
        tenantId: ta.id,
        claimId: a.claimId,
        sandboxId: sandbox.id,
        mode: 'view',
        expiresAt: new Date(Date.now() + 3600_000),
      },
    });
    // An MCP token of A's (stored as minting leaves it), for the MCP token routes.
    a.mcpTokenId = newId('mcp_token');
    await db.mcpToken.create({
      data: {
        id: a.mcpTokenId,
        tenantId: ta.id,
        claimId: a.claimId,
        expiresAt: new Date(Date.now() + 3600_000),
      },
    });
    // A handoff of A's claim, for the handoff routes.
    a.handoffId = newId('handoff');
    await db.handoff.create({
      data: {
        id: a.handoffId,
        tenantId: ta.id,
        claimId: a.claimId,
        reason: 'r',
        ttlSeconds: 60,
        leaseExpiresAt: new Date(Date.now() + 60_000),
        claimTtlLeftMs: 0n,
      },
    });
    // A snapshot of A's (a row as a finished create leaves it), for the snapshot routes.
    a.snapshotId = newId('snapshot');
    await db.snapshot.create({
      data: {
        id: a.snapshotId,
        tenantId: ta.id,
        status: 'ready',
        paths: ['Documents'],
        sourceClaimId: a.claimId,
        sourcePool: 'alpha',
        sourcePoolId: pool.id,
        expiresAt: new Date(Date.now() + 3600_000),
      },
    });
    // A replay link and a profile of A's, for their routes (a profile is named by its name).
    a.replayLinkId = newId('replay_link');
    await db.replayLink.create({
      data: {
        id: a.replayLinkId,
        tenantId: ta.id,
        claimId: a.claimId,
        expiresAt: new Date(Date.now() + 3600_000),
      },
    });
    await db.profile.create({
      data: { id: newId('profile'), tenantId: ta.id, name: a.profileName },
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

  const implemented = () =>
    (Object.values(Routes) as RouteDef[]).filter((r) =>
      app.hasRoute({ method: r.method, url: toFastifyPath(r.path) }),
    );

  /** Path values pointing at tenant A's resources. */
  function pathFor(r: RouteDef): string {
    return r.path
      .replace('{name}', r.path.startsWith('/v1/secrets') ? 'ALPHA' : a.poolName)
      .replace(
        '{id}',
        r.path.startsWith('/v1/api-keys')
          ? a.keyId
          : r.path.startsWith('/v1/webhooks')
            ? newId('webhook')
            : r.path.startsWith('/v1/snapshots')
              ? a.snapshotId
              : r.path.startsWith('/v1/profiles')
                ? a.profileName
                : a.claimId,
      )
      .replace('{ticket_id}', a.ticketId)
      .replace('{token_id}', a.mcpTokenId)
      .replace('{handoff_id}', a.handoffId)
      .replace('{link_id}', a.replayLinkId)
      .replace('{run_id}', newId('run'))
      .replace('{screenshot_id}', 'p1')
      .replace('{delivery_id}', newId('webhook_delivery'))
      .replace(/\{[a-z_]+\}/g, newId('secret'));
  }

  const snapshot = async () =>
    Promise.all([
      db.pool.count(),
      db.claim.count(),
      db.sandbox.count(),
      db.apiKey.count({ where: { revokedAt: null } }),
      db.claim.count({ where: { status: 'released' } }),
      db.viewerTicket.count({ where: { revokedAt: null } }),
      db.claimSecret.count(),
      db.tenantSecret.count(),
      db.snapshot.count(),
      db.replayLink.count({ where: { revokedAt: null } }),
      db.profile.count(),
      db.tenant.findMany({ orderBy: { id: 'asc' } }),
    ]);

  it('covers the control-plane routes', () => {
    const ops = implemented().map((r) => r.operationId);
    for (const op of [
      'applyPool',
      'getPool',
      'listPools',
      'deletePool',
      'createClaim',
      'getClaim',
      'listClaims',
      'heartbeatClaim',
      'updateClaim',
      'releaseClaim',
      'createApiKey',
      'listApiKeys',
      'revokeApiKey',
      'createViewerTicket',
      'listViewerTickets',
      'revokeViewerTicket',
      'getTenant',
      'updateTenant',
    ]) {
      expect(ops).toContain(op);
    }
  });

  it("tenant B's key on tenant A's resources is 404 and changes nothing", async () => {
    const before = await snapshot();
    for (const r of implemented()) {
      // PUT of a pool name is tenant-scoped by design: B's PUT makes B's own pool (checked below).
      // PUT of a stored secret's name is tenant-scoped the same way (B writes B's own secret).
      if (
        r.auth === 'none' ||
        !r.params ||
        r.operationId === 'applyPool' ||
        r.operationId === 'putStoredSecret'
      )
        continue;
      const res = await app.inject({
        method: r.method,
        url: pathFor(r),
        headers: { authorization: b.auth },
        payload: r.body ? bodyFor(r) : undefined,
      });
      expect(res.statusCode, `${r.method} ${r.path}`).toBe(404);
      expect(res.json().error.code, `${r.method} ${r.path}`).toBe('not_found');
    }
    const lists = await Promise.all(
      ['/v1/pools', '/v1/claims', '/v1/api-keys'].map((url) =>
        app.inject({ method: 'GET', url, headers: { authorization: b.auth } }),
      ),
    );
    for (const res of lists)
      expect(JSON.stringify(res.json())).not.toMatch(new RegExp(`${a.claimId}|${a.keyId}|"alpha"`));
    expect(await snapshot()).toEqual(before);
    // B applying a pool of the same name creates B's own; A's pool is untouched.
    const aPool = await db.pool.findFirstOrThrow({
      where: { tenantId: a.tenantId, name: 'alpha' },
    });
    const put = await app.inject({
      method: 'PUT',
      url: '/v1/pools/alpha',
      headers: { authorization: b.auth },
      payload: { image: 'other', autoscaling: { min: 0, initial: 0, max: 1 } },
    });
    expect(put.statusCode).toBe(201);
    expect(put.json().id).not.toBe(aPool.id);
    expect(await db.pool.findFirstOrThrow({ where: { id: aPool.id } })).toEqual(aPool);
  });

  it('bad input everywhere is a 4xx with a known code, never a 5xx, and changes nothing', async () => {
    const before = await snapshot();
    const known = new Set<string>(ErrorCodeList);
    for (const r of implemented()) {
      if (r.auth === 'none') continue;
      const attempts: { url: string; payload?: unknown; headers?: Record<string, string> }[] = [];
      if (r.params)
        attempts.push({ url: r.path.replace(/\{[a-z_]+\}/g, "x'; DROP TABLE claims; --") });
      if (r.params) attempts.push({ url: r.path.replace(/\{[a-z_]+\}/g, 'A'.repeat(300)) });
      if (r.query) attempts.push({ url: `${pathFor(r)}?limit=-5&cursor=` });
      if (r.body) {
        attempts.push({ url: pathFor(r), payload: { surprise: true } });
        attempts.push({
          url: pathFor(r),
          payload: '[1,2,3]',
          headers: { 'content-type': 'application/json' },
        });
        attempts.push({
          url: pathFor(r),
          payload: '{"truncated":',
          headers: { 'content-type': 'application/json' },
        });
        attempts.push({
          url: pathFor(r),
          payload: { ...bodyFor(r), huge: 'x'.repeat(2 * 1024 * 1024) },
        });
        attempts.push({ url: pathFor(r), payload: typeWrong(r) });
      }
      for (const attempt of attempts) {
        const res = await app.inject({
          method: r.method,
          url: attempt.url,
          payload: attempt.payload as string,
          headers: { authorization: a.auth, ...attempt.headers },
        });
        const where = `${r.method} ${attempt.url.slice(0, 60)} ${JSON.stringify(attempt.payload ?? '').slice(0, 40)}`;
        expect(res.statusCode, where).toBeGreaterThanOrEqual(400);
        expect(res.statusCode, where).toBeLessThan(500);
        expect(
          known.has(res.json().error?.code),
          `${where} → ${res.statusCode} ${res.body.slice(0, 200)}`,
        ).toBe(true);
      }
    }
    expect(await snapshot()).toEqual(before);
  });
});

/** A valid body per route, so only the part under test is wrong. */
function bodyFor(r: RouteDef): Record<string, unknown> {
  switch (r.operationId) {
    case 'applyPool':
      return { image: 'x', autoscaling: { min: 0, initial: 0, max: 1 } };
    case 'createApiKey':
      return { name: 'n', role: 'member' };
    case 'createViewerTicket':
      return { mode: 'view' };
    case 'requestHandoff':
      return { reason: 'a login' };
    case 'updateTenant':
      return { embed_origins: ['https://app.example.test'] };
    case 'updateClaim':
      return { ttl_seconds: 60 };
    case 'createClaim':
      return { wait_seconds: 0 };
    case 'createSecret':
    case 'createStoredSecret':
      return { name: 'ALPHA', value: 'v' };
    case 'putStoredSecret':
      return { value: 'v' };
    case 'updateWebhook':
      return { enabled: false };
    // Drive routes: valid guest requests (the claim is pending, so nothing reaches a guest).
    case 'observeClaim':
    case 'closeClaimWindow':
      return { window_id: 1 };
    case 'actClaim':
      return { window_id: 1, element_token: 's1:1', action: 'click' };
    case 'inputClaim':
      return { action: 'click', window_id: 1, screenshot_id: 'p1', x: 1, y: 1 };
    case 'verifyClaim':
      return { window_id: 1, predicates: [{ kind: 'element_exists', selector: { role: 'text' } }] };
    case 'runClaimShell':
    case 'launchClaimWindow':
    case 'createRun':
      return { argv: ['true'] };
    case 'readClaimFile':
    case 'listClaimFiles':
    case 'statClaimFile':
    case 'deleteClaimFile':
      return { path: '/tmp/x' };
    case 'writeClaimFile':
      return { path: '/tmp/x', content: '' };
    default:
      return {};
  }
}

/** The same body with its fields' types wrong. */
function typeWrong(r: RouteDef): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries({ ...bodyFor(r), name: 12, ttl_seconds: 'soon' }).map(([k, v]) => [
      k,
      typeof v === 'string' ? 42 : 'wrong',
    ]),
  );
}
