import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { e2eBackends } from './support/sandbox-backend.js';
import { startStack, waitFor, type Stack } from './support/stack.js';

/**
 * The control plane end to end on the embedded default's parts: REST (inject) → Postgres →
 * BullMQ → the worker process → a backend → real desktop sessions. One suite, run against each
 * backend (CUBICLE_E2E_BACKENDS): local sessions, and Pods / VMIs of a real kube-apiserver whose
 * test node agent runs each as a local desktop.
 */
describe.each(e2eBackends())('claims on real desktops (%s backend)', (backend) => {
  let s: Stack;
  const call = (
    method: string,
    url: string,
    payload?: unknown,
    headers: Record<string, string> = {},
  ) =>
    s.api.inject({
      method: method as 'GET',
      url,
      payload: payload as object,
      headers: { ...s.auth, ...headers },
    });
  const counts = async (pool: string) => (await call('GET', `/v1/pools/${pool}`)).json().counts;
  const desktopsOf = async (sandboxId: string) =>
    (await s.backend.liveSandboxIds()).has(sandboxId) ? 1 : 0;

  beforeAll(async () => {
    s = await startStack({ backend });
  });
  afterAll(async () => s?.close());

  it('a pool fills with warm desktops; a claim gets one at once; release destroys it and the pool refills', async () => {
    const put = await call('PUT', '/v1/pools/desk', {
      ...s.backend.pool,
      autoscaling: { min: 1, initial: 2, max: 4 },
    });
    expect(put.statusCode).toBe(201);
    expect(put.json()).toMatchObject({
      name: 'desk',
      generation: 1,
      autoscaling: { min: 1, initial: 2, max: 4 },
    });
    expect(
      (
        await call('PUT', '/v1/pools/desk', {
          ...s.backend.pool,
          autoscaling: { min: 1, initial: 2, max: 4 },
        })
      ).statusCode,
    ).toBe(200);
    await waitFor(async () => (await counts('desk')).warm === 2, 120_000, 250);

    const claimed = await call('POST', '/v1/pools/desk/claims', { ttl_seconds: 600 });
    expect(claimed.statusCode).toBe(201);
    const claim = claimed.json();
    expect(claim).toMatchObject({ status: 'active', pool: 'desk', sandbox: { state: 'claimed' } });
    expect(await desktopsOf(claim.sandbox.id)).toBe(1);
    // Kubernetes backends mirror the claim onto the Pod/VMI label (the database stays the truth).
    const stateLabel = s.backend.stateLabel;
    if (stateLabel)
      await waitFor(async () => (await stateLabel(claim.sandbox.id)) === 'claimed', 30_000);

    const released = await call('DELETE', `/v1/claims/${claim.id}`);
    expect(released.json()).toMatchObject({
      status: 'released',
      release_reason: 'released_by_client',
    });
    await waitFor(async () => (await desktopsOf(claim.sandbox.id)) === 0, 30_000);
    await waitFor(
      async () =>
        (await s.db.sandbox.findUniqueOrThrow({ where: { id: claim.sandbox.id } })).state ===
        'deleted',
      30_000,
    );
    await waitFor(async () => (await counts('desk')).warm === 2, 120_000, 250);
  });

  it('idempotent claims survive an API restart', async () => {
    const headers = { 'idempotency-key': 'job-123-attempt' };
    const first = await call(
      'POST',
      '/v1/pools/desk/claims',
      { metadata: { job: '123' } },
      headers,
    );
    expect(first.statusCode).toBe(201);
    await s.restartApi();
    const retry = await call(
      'POST',
      '/v1/pools/desk/claims',
      { metadata: { job: '123' } },
      headers,
    );
    expect(retry.statusCode).toBe(201);
    expect(retry.json().id).toBe(first.json().id);
    const conflict = await call(
      'POST',
      '/v1/pools/desk/claims',
      { metadata: { job: '999' } },
      headers,
    );
    expect(conflict.statusCode).toBe(409);
    expect(conflict.json().error.code).toBe('idempotency_key_reused');
    expect((await call('DELETE', `/v1/claims/${first.json().id}`)).statusCode).toBe(200);
  });

  it('a 2 s claim is released within 2 s of expiry, its desktop stops, the pool refills', async () => {
    await waitFor(async () => (await counts('desk')).warm >= 1, 120_000, 250);
    const claim = (await call('POST', '/v1/pools/desk/claims', { ttl_seconds: 2 })).json();
    expect(claim.status).toBe('active');
    await waitFor(
      async () => (await call('GET', `/v1/claims/${claim.id}`)).json().status === 'released',
      10_000,
      50,
    );
    const after = (await call('GET', `/v1/claims/${claim.id}`)).json();
    expect(after.release_reason).toBe('ttl_expired');
    const lateness = new Date(after.released_at).getTime() - new Date(after.expires_at).getTime();
    expect(lateness).toBeGreaterThanOrEqual(0);
    expect(lateness).toBeLessThan(2000);
    await waitFor(async () => (await desktopsOf(claim.sandbox.id)) === 0, 30_000);
    await waitFor(async () => (await counts('desk')).warm === 2, 120_000, 250);
  });

  it('heartbeats keep an idle-timeout claim; silence reclaims it', async () => {
    await call('PUT', '/v1/pools/idle', {
      ...s.backend.pool,
      autoscaling: { min: 0, initial: 1, max: 2 },
      idle_timeout_seconds: 2,
    });
    await waitFor(async () => (await counts('idle')).warm === 1, 120_000, 250);
    const claim = (await call('POST', '/v1/pools/idle/claims', {})).json();
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, 1000));
      expect((await call('POST', `/v1/claims/${claim.id}/heartbeat`)).statusCode).toBe(200);
    }
    expect((await call('GET', `/v1/claims/${claim.id}`)).json().status).toBe('active');
    await waitFor(
      async () => (await call('GET', `/v1/claims/${claim.id}`)).json().status === 'released',
      10_000,
      100,
    );
    expect((await call('GET', `/v1/claims/${claim.id}`)).json().release_reason).toBe(
      'idle_timeout',
    );
    expect((await call('DELETE', '/v1/pools/idle')).statusCode).toBe(202);
  });

  it('a desktop lost behind the control plane is marked failed and replaced', async () => {
    await call('PUT', '/v1/pools/lost', {
      ...s.backend.pool,
      autoscaling: { min: 1, initial: 1, max: 2 },
    });
    await waitFor(async () => (await counts('lost')).warm === 1, 120_000, 250);
    const pool = (await call('GET', '/v1/pools/lost')).json();
    const lost = await s.db.sandbox.findFirstOrThrow({ where: { poolId: pool.id, state: 'warm' } });
    await s.backend.loseSandbox(lost.id);
    await waitFor(
      async () =>
        (await s.db.sandbox.findUniqueOrThrow({ where: { id: lost.id } })).failureReason ===
        'lost by the backend',
      60_000,
      250,
    );
    await waitFor(
      async () =>
        (await s.db.sandbox.count({
          where: { poolId: pool.id, state: 'warm', id: { not: lost.id } },
        })) === 1,
      120_000,
      250,
    );
    expect((await call('DELETE', '/v1/pools/lost')).statusCode).toBe(202);
  });

  it('a desktop the database does not know (left by a crash) is removed by the sweep', async () => {
    // plantOrphan returns once the orphan runs (local: its desktop started; kubernetes: its
    // object exists). Not asserted again here: the sweep, every 2 s, may already have removed it.
    const orphan = await s.backend.plantOrphan();
    await waitFor(async () => !(await s.backend.holds(orphan)), 60_000, 250);
    await waitFor(async () => (await desktopsOf(orphan)) === 0, 60_000, 250);
    expect(await s.db.sandbox.count({ where: { id: orphan } })).toBe(0);
  });

  it('kill -9 of the worker during provisioning and during release leaks no desktop and converges', async () => {
    await call('PUT', '/v1/pools/crash', {
      ...s.backend.pool,
      autoscaling: { min: 2, initial: 2, max: 3 },
    });
    // Kill while the pool's first sandboxes are provisioning.
    await waitFor(async () => (await counts('crash')).provisioning > 0, 30_000, 20);
    await s.restartWorker({ crash: true });
    await waitFor(async () => (await counts('crash')).warm === 2, 180_000, 250);
    // Kill right after a release, while the destroy job runs.
    const claim = (await call('POST', '/v1/pools/crash/claims', {})).json();
    await call('DELETE', `/v1/claims/${claim.id}`);
    await s.restartWorker({ crash: true });
    await waitFor(async () => (await desktopsOf(claim.sandbox.id)) === 0, 60_000, 250);
    await waitFor(async () => (await counts('crash')).warm === 2, 180_000, 250);
    // The database and the machine agree: every live desktop is a warm or claimed sandbox.
    await waitFor(
      async () => {
        const live = await s.backend.liveSandboxIds();
        const rows = await s.db.sandbox.findMany({
          where: { state: { in: ['warm', 'claimed'] } },
          select: { id: true },
        });
        const ok = live.size === rows.length && rows.every((r) => live.has(r.id));
        if (!ok && process.env.DEBUG_E2E) {
          const all = await s.db.sandbox.findMany({
            where: { id: { in: [...live] } },
            select: { id: true, state: true, failureReason: true },
          });
          console.log(
            'live',
            [...live],
            'db warm/claimed',
            rows.map((r) => r.id),
            'live in db',
            all,
            s.worker.output().slice(-2000),
          );
        }
        return ok;
      },
      60_000,
      500,
    );
    expect((await call('DELETE', '/v1/pools/crash')).statusCode).toBe(202);
  });
});
