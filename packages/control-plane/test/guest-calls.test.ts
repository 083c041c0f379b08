import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { PoolSpec } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { newId } from '@cubicle/db';
import { createQueueConnection, JobQueues, LaneDispatcher } from '@cubicle/queue';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestRedisNamespace } from '../../../test/harness/index.js';
import {
  answerGuestCallJob,
  applyPool,
  releaseClaim,
  GuestCalls,
  LiveClaimMemory,
  newKeyringSpec,
  parseKeyring,
  seal,
  type WorkerDeps,
} from '../src/index.js';
import { guestCallBoundMs } from '../src/guest-calls/guest-call-bounds.js';
import { runGuestCall } from '../src/guest-calls/run-guest-call.js';
import { world, type World } from './setup.js';

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: unknown) => (e instanceof AppError ? e.code : String(e)),
  );

/**
 * The transport of guest calls on real Postgres and Redis: lookups and refusals in the API half,
 * the worker half's checks before anything reaches a guest, and an answer travelling enqueue →
 * sandbox lane → dispatcher → pub/sub → the waiting caller. The guest is a real closed or silent port, so
 * these tests never need a desktop (test/e2e/drive.test.ts drives real ones).
 */
describe('guest calls on real Postgres and Redis', () => {
  let w: World;
  let deps: WorkerDeps;
  let prefix: string;
  let queues: JobQueues;
  let publisher: Redis;
  let subscriber: Redis;
  let listener: Server;
  let connections = 0;
  const sockets = new Set<Socket>();
  let silentPort = 0;
  const ns = createTestRedisNamespace();

  /** claimedSandbox seeds an active claim on a claimed sandbox whose guest is at `endpoint`. */
  async function claimedSandbox(endpoint: string, tenantId = w.tenantId) {
    const { pool } = await applyPool(
      deps,
      tenantId,
      `p${Math.random().toString(36).slice(2, 10)}`,
      PoolSpec.parse({ image: 'img', autoscaling: { min: 0, initial: 0, max: 1 } }),
    );
    const poolId = pool.id;
    const sandboxId = newId('sandbox');
    await w.db.sandbox.create({
      data: {
        id: sandboxId,
        tenantId,
        poolId,
        backend: 'local',
        image: 'img',
        generation: 1,
        state: 'claimed',
        guestEndpoint: endpoint,
        guestTokenCiphertext: seal(deps.keyring, 'guest-token', sandboxId),
      },
    });
    const claimId = newId('claim');
    const now = Date.now();
    await w.db.claim.create({
      data: {
        id: claimId,
        tenantId,
        poolId,
        sandboxId,
        name: `c${claimId.slice(-8)}`,
        status: 'active',
        ttlSeconds: 600,
        expiresAt: new Date(now + 600_000),
        maxExpiresAt: new Date(now + 3_600_000),
      },
    });
    return { sandboxId, claimId };
  }

  /** startWorkerHalf runs the worker's side of guest calls: a lane dispatcher answering jobs. */
  function startWorkerHalf() {
    const connection = createQueueConnection(ns.url);
    const dispatcher = new LaneDispatcher({
      connection,
      prefix,
      handler: (job) => answerGuestCallJob(deps, { publisher, prefix }, job),
    });
    dispatcher.start();
    return {
      async close() {
        await dispatcher.close();
        connection.disconnect();
      },
    };
  }

  beforeAll(async () => {
    w = await world();
    prefix = ns.bullPrefix;
    publisher = createQueueConnection(ns.url);
    queues = new JobQueues(publisher, prefix);
    deps = { ...w.deps, queues, backends: {}, keyring: parseKeyring(newKeyringSpec()) };
    subscriber = createQueueConnection(ns.url);
    // A port that accepts and never answers: proves whether anything was delivered.
    listener = createServer((socket) => {
      connections++;
      sockets.add(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    silentPort = (listener.address() as { port: number }).port;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((r) => listener?.close(r));
    await queues?.close();
    publisher?.disconnect();
    subscriber?.disconnect();
    await ns.cleanup();
    await w?.close();
  });

  it('bounds follow the request’s own wait, within the job timeout', () => {
    expect(guestCallBoundMs('screenshot', {})).toBe(30_000);
    expect(guestCallBoundMs('shell.run', { timeout_ms: 60_000 })).toBe(65_000);
    expect(guestCallBoundMs('shell.run', { timeout_ms: 3_600_000 })).toBe(120_000);
    expect(guestCallBoundMs('windows.launch', { wait_for_window_ms: 1_000 })).toBe(30_000);
  });

  it('the API half answers not_found for unknown and foreign claims and claim_not_active for released ones', async () => {
    const calls = new GuestCalls(deps, { subscriber, prefix });
    const { claimId } = await claimedSandbox('http://127.0.0.1:1');
    expect(await codeOf(calls.call(w.tenantId, newId('claim'), 'windows.list', {}))).toBe(
      'not_found',
    );
    expect(await codeOf(calls.call(w.otherTenantId, claimId, 'windows.list', {}))).toBe(
      'not_found',
    );
    await releaseClaim(deps, w.tenantId, claimId);
    expect(await codeOf(calls.call(w.tenantId, claimId, 'windows.list', {}))).toBe(
      'claim_not_active',
    );
    expect(calls.pending).toBe(0);
  });

  it('the worker half delivers nothing for a released claim or a call whose caller gave up', async () => {
    const { sandboxId, claimId } = await claimedSandbox(`http://127.0.0.1:${silentPort}`);
    const payload = {
      tenant_id: w.tenantId,
      claim_id: claimId,
      sandbox_id: sandboxId,
      operation: 'windows.list' as const,
      request: {},
    };
    const late = await runGuestCall(deps, payload, { enqueuedAt: Date.now() - 31_000 });
    expect(late).toMatchObject({ status: 504, body: { error: { code: 'timeout' } } });
    const foreign = await runGuestCall(
      deps,
      { ...payload, tenant_id: w.otherTenantId },
      { enqueuedAt: Date.now() },
    );
    expect(foreign).toMatchObject({ status: 409, body: { error: { code: 'claim_not_active' } } });
    const invalid = await runGuestCall(
      deps,
      { ...payload, operation: 'shell.run', request: { argv: [] } },
      { enqueuedAt: Date.now() },
    );
    expect(invalid).toMatchObject({ status: 400, body: { error: { code: 'validation_failed' } } });
    expect(connections).toBe(0);
    // A guest that never answers is cut off at the bound and reported as maybe delivered.
    const silent = await runGuestCall(deps, payload, { enqueuedAt: Date.now() - 29_000 });
    expect(silent).toMatchObject({ status: 504, body: { error: { code: 'timeout' } } });
    expect(connections).toBe(1);
  });

  it('the worker half records a call as its claim’s activity and writes the claim’s secrets before its first call, in one lookup', async () => {
    const plain = await claimedSandbox('http://127.0.0.1:1'); // nothing listens there
    const delivered: string[] = [];
    const deliverSecrets = async (guest: { claimId: string }) => {
      delivered.push(guest.claimId);
      return true;
    };
    const payload = (c: { sandboxId: string; claimId: string }) => ({
      tenant_id: w.tenantId,
      claim_id: c.claimId,
      sandbox_id: c.sandboxId,
      operation: 'windows.list' as const,
      request: {},
    });
    const before = new Date();
    const answer = await runGuestCall(deps, payload(plain), {
      enqueuedAt: Date.now(),
      deliverSecrets,
    });
    expect(answer).toMatchObject({ body: { error: { code: 'backend_unavailable' } } });
    const touched = await w.db.claim.findUniqueOrThrow({ where: { id: plain.claimId } });
    expect(touched.lastActiveAt?.getTime()).toBeGreaterThanOrEqual(before.getTime() - 1000);
    // No secrets: nothing to deliver, and no statement spent finding that out.
    expect(delivered).toEqual([]);

    const withSecrets = await claimedSandbox('http://127.0.0.1:1');
    await w.db.claimSecret.create({
      data: {
        id: `secret-${withSecrets.claimId}`,
        tenantId: w.tenantId,
        claimId: withSecrets.claimId,
        name: 'TOKEN',
        ciphertext: Buffer.from('x'),
        nonce: Buffer.from('n'),
        wrappedKey: Buffer.from('k'),
        keyId: 'k1',
      },
    });
    await runGuestCall(deps, payload(withSecrets), { enqueuedAt: Date.now(), deliverSecrets });
    expect(delivered).toEqual([withSecrets.claimId]);
  });

  it('an answer travels enqueue → worker → pub/sub back to its caller, and guest failures keep their code', async () => {
    const { claimId } = await claimedSandbox('http://127.0.0.1:1'); // nothing listens there
    const worker = startWorkerHalf();
    const calls = new GuestCalls(deps, { subscriber, prefix });
    try {
      const results = await Promise.all(
        [1, 2, 3].map(() => codeOf(calls.call(w.tenantId, claimId, 'windows.list', {}))),
      );
      expect(results).toEqual([
        'backend_unavailable',
        'backend_unavailable',
        'backend_unavailable',
      ]);
      expect(calls.pending).toBe(0);
      expect(calls.stats()).toEqual({ waiters: 0, claimChains: 0, claimRoutes: 1 });
      // Nothing is stored for calls that produced no ActionResult.
      expect(await w.db.actionRecord.count({ where: { claimId } })).toBe(0);
    } finally {
      await calls.close();
      await worker.close();
    }
  });

  it('the worker is the one check of a guest answer: one outside the contract is refused, one inside goes on as its text with where its time went', async () => {
    // A guest stands in the tenant's sandbox: this one answers windows.list as it likes.
    let answer: unknown = { windows: [] };
    const guest = createHttpServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(answer));
      });
    });
    await new Promise<void>((resolve) => guest.listen(0, '127.0.0.1', resolve));
    const { port } = guest.address() as { port: number };
    const { claimId } = await claimedSandbox(`http://127.0.0.1:${port}`);
    const worker = startWorkerHalf();
    const calls = new GuestCalls(deps, { subscriber, prefix });
    try {
      const ok = await calls.callJson(w.tenantId, claimId, 'windows.list', {});
      expect(JSON.parse(ok.json)).toEqual({ windows: [] });
      const parts = Object.fromEntries(
        ok.serverTiming.split(', ').map((p) => {
          const [name, dur] = p.split(';dur=');
          return [name, Number(dur)];
        }),
      );
      expect(Object.keys(parts)).toEqual([
        'enqueue',
        'wait',
        'lane',
        'queued',
        'target',
        'guest',
        'check',
        'store',
        'worker',
      ]);
      expect(parts.guest).toBeGreaterThan(0);
      expect(parts.worker).toBeGreaterThanOrEqual(parts.guest! + parts.target!);
      expect(parts.wait).toBeGreaterThanOrEqual(parts.worker!);

      // Outside the contract: an unknown key (the schemas are strict), then a wrong type.
      answer = { windows: [], injected: 'x' };
      expect(await codeOf(calls.callJson(w.tenantId, claimId, 'windows.list', {}))).toBe(
        'backend_unavailable',
      );
      answer = { windows: [{ window_id: 'not a number' }] };
      expect(await codeOf(calls.call(w.tenantId, claimId, 'windows.list', {}))).toBe(
        'backend_unavailable',
      );
    } finally {
      await calls.close();
      await worker.close();
      await new Promise((r) => guest.close(r));
    }
  });

  it('a claim’s route is remembered for its later calls, is no way into another tenant’s claim, and is forgotten when the claim ends', async () => {
    const worker = startWorkerHalf();
    const calls = new GuestCalls(deps, { subscriber, prefix });
    const broadcasting = { ...deps, events: { publisher, prefix } };
    try {
      const first = await claimedSandbox('http://127.0.0.1:1');
      expect(await codeOf(calls.call(w.tenantId, first.claimId, 'windows.list', {}))).toBe(
        'backend_unavailable',
      );
      expect(calls.stats().claimRoutes).toBe(1);
      // Another tenant naming the claim is looked up (not found), never routed by the memory.
      expect(await codeOf(calls.call(w.otherTenantId, first.claimId, 'windows.list', {}))).toBe(
        'not_found',
      );
      // Ended with no broadcast (a lost message): the route is still remembered, and the worker,
      // which checks the claim before delivering, refuses the call as the lookup would have.
      await releaseClaim(deps, w.tenantId, first.claimId);
      expect(calls.stats().claimRoutes).toBe(1);
      expect(await codeOf(calls.call(w.tenantId, first.claimId, 'windows.list', {}))).toBe(
        'claim_not_active',
      );
      // Ended with its broadcast: forgotten at once.
      const second = await claimedSandbox('http://127.0.0.1:1');
      await codeOf(calls.call(w.tenantId, second.claimId, 'windows.list', {}));
      expect(calls.stats().claimRoutes).toBe(2);
      await releaseClaim(broadcasting, w.tenantId, second.claimId);
      const deadline = Date.now() + 5_000;
      while (calls.stats().claimRoutes !== 1 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      expect(calls.stats()).toEqual({ waiters: 0, claimChains: 0, claimRoutes: 1 });
    } finally {
      await calls.close();
      await worker.close();
    }
    expect(calls.stats().claimRoutes).toBe(0);
  });

  it('a claim this process has just made is routed from memory: its first call looks nothing up', async () => {
    const worker = startWorkerHalf();
    const calls = new GuestCalls(deps, { subscriber, prefix });
    try {
      const { sandboxId } = await claimedSandbox('http://127.0.0.1:1');
      // A claim id with no row: looked up it is not_found; routed from memory, the worker (which
      // checks every claim before delivering) refuses it as a claim that ended.
      const made = { id: newId('claim'), status: 'active', sandbox: { id: sandboxId } };
      const pending = { id: newId('claim'), status: 'pending', sandbox: null };
      calls.rememberClaim(w.tenantId, made);
      calls.rememberClaim(w.tenantId, pending);
      const deadline = Date.now() + 5_000;
      while (calls.stats().claimRoutes !== 1 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      expect(calls.stats().claimRoutes).toBe(1);
      expect(await codeOf(calls.call(w.tenantId, made.id, 'windows.list', {}))).toBe(
        'claim_not_active',
      );
      // A pending claim is not remembered, and another tenant naming the claim is looked up.
      expect(await codeOf(calls.call(w.tenantId, pending.id, 'windows.list', {}))).toBe(
        'not_found',
      );
      expect(await codeOf(calls.call(w.otherTenantId, made.id, 'windows.list', {}))).toBe(
        'not_found',
      );
    } finally {
      await calls.close();
      await worker.close();
    }
  });

  it('a live claim memory forgets on prune the claims that ended while their message was lost', async () => {
    const own = createQueueConnection(ns.url);
    const memory = new LiveClaimMemory<number>({ db: w.db, subscriber: own, prefix });
    try {
      await memory.start();
      const live = await claimedSandbox('http://127.0.0.1:1');
      const ended = await claimedSandbox('http://127.0.0.1:1');
      await releaseClaim(deps, w.tenantId, ended.claimId); // no broadcast
      memory.set(live.claimId, 1);
      memory.set(ended.claimId, 2);
      memory.set(newId('claim'), 3); // never existed
      await memory.prune();
      expect([memory.size, memory.get(live.claimId), memory.has(ended.claimId)]).toEqual([
        1,
        1,
        false,
      ]);
    } finally {
      await memory.close();
      own.disconnect();
    }
  });
});
