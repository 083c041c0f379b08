import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rollupUsage } from '../../packages/control-plane/src/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, waitFor, type Stack } from './support/stack.js';
import { RawRfbClient } from './support/rfb-client.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The host pids of a local sandbox: every task of its cgroup (its session file names it). */
function sandboxPids(sandboxId: string): number[] {
  const dir = readdirSync(tmpdir()).find(
    (n) => n.startsWith('cubicle-desktop-') && n.endsWith(`-${sandboxId}`),
  );
  if (!dir) throw new Error(`no session directory for ${sandboxId}`);
  const session = JSON.parse(readFileSync(join(tmpdir(), dir, 'session.json'), 'utf8')) as {
    cgroup: { paths: string[] };
  };
  const procs = readFileSync(join(session.cgroup.paths[0]!, 'cgroup.procs'), 'utf8');
  return procs.split('\n').filter(Boolean).map(Number);
}

/** CPU ticks (utime + stime, /proc/<pid>/stat fields 14 and 15) of processes, summed. */
function cpuTicks(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      /* exited */
    }
  }
  return ticks;
}

/** ticksOver measures what `pids` use over `ms` of wall time. */
async function ticksOver(pids: number[], ms: number): Promise<number> {
  const before = cpuTicks(pids);
  await sleep(ms);
  return cpuTicks(pids) - before;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * Pause and resume on real local desktops (issue 34): the sandbox's whole cgroup is frozen (no
 * CPU, measured from /proc), a driving call resumes it transparently, paused time is neither
 * TTL nor idle time, auto-pause after a pool's idle_pause_seconds, usage counts paused seconds,
 * webhooks announce both. A CPU-bound loop inside the desktop makes "no CPU" mean something.
 */
describe('pausing and resuming a claimed desktop', () => {
  let s: Stack;
  let recv: WebhookReceiver;
  let claimId: string;
  let sandboxId: string;
  const call = (method: string, url: string, payload?: unknown) =>
    s.api.inject({
      method: method as 'GET',
      url,
      headers: s.auth,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const claimOf = async (id = claimId) => (await call('GET', `/v1/claims/${id}`)).json();

  beforeAll(async () => {
    s = await startStack({ backend: 'local' });
    recv = await startWebhookReceiver();
    const hook = await call('POST', '/v1/webhooks', {
      url: recv.url,
      events: ['claim.paused', 'claim.resumed'],
    });
    expect(hook.statusCode, hook.body).toBe(201);
    // A short heartbeat window: a pause longer than it must not end the claim.
    for (const [name, extra] of [
      ['pause', { idle_timeout_seconds: 7 }],
      ['autopause', { idle_pause_seconds: 2 }],
    ] as const) {
      const put = await call('PUT', `/v1/pools/${name}`, {
        ...s.backend.pool,
        autoscaling: { min: 0, initial: 1, max: 1 },
        ...extra,
      });
      expect(put.statusCode, put.body).toBe(201);
    }
    await waitFor(
      async () =>
        (await call('GET', '/v1/pools/pause')).json().counts.warm === 1 &&
        (await call('GET', '/v1/pools/autopause')).json().counts.warm === 1,
      180_000,
      250,
    );
    const claim = await call('POST', '/v1/pools/pause/claims', { ttl_seconds: 600 });
    expect(claim.statusCode, claim.body).toBe(201);
    claimId = claim.json().id;
    sandboxId = claim.json().sandbox.id;
    expect(claim.json().paused_at).toBeNull();
    // Something that always wants CPU (setsid: it outlives the shell call).
    const busy = await call('POST', `/v1/claims/${claimId}/shell`, {
      argv: ['sh', '-c', "setsid sh -c 'while :; do :; done' </dev/null >/dev/null 2>&1 &"],
    });
    expect(busy.statusCode, busy.body).toBe(200);
  }, 240_000);
  afterAll(async () => {
    await recv?.close();
    await s?.close();
  });

  it('freezes every process of the desktop: no CPU over 5 s, and the claim says paused', async () => {
    const pids = sandboxPids(sandboxId);
    // The loop runs (on a loaded machine it may get little CPU, but never none over 2 s).
    expect(await ticksOver(pids, 2000)).toBeGreaterThan(0);
    expect((await call('POST', `/v1/claims/${claimId}/heartbeat`)).statusCode).toBe(200);

    const paused = await call('POST', `/v1/claims/${claimId}/pause`);
    expect(paused.statusCode, paused.body).toBe(200);
    const pausedAt = paused.json().paused_at as string;
    expect(pausedAt).not.toBeNull();
    expect(paused.json().status).toBe('active');
    // While paused, the TTL deadline is the hard maximum (only it runs).
    expect(paused.json().expires_at).toBe(paused.json().max_expires_at);

    const ticks = await ticksOver(sandboxPids(sandboxId), 5000);
    console.log(`pause: ${pids.length} processes used ${ticks} CPU ticks over 5 s paused`);
    expect(ticks).toBe(0);

    // Idempotent: pausing again answers the same pause.
    const again = await call('POST', `/v1/claims/${claimId}/pause`);
    expect(again.statusCode).toBe(200);
    expect(again.json().paused_at).toBe(pausedAt);
  }, 30_000);

  it('does not count paused time as idle: paused past its 7 s heartbeat window, it is still held', async () => {
    // Paused > 5 s already; wait past the heartbeat window (7 s) plus two reclaim sweeps.
    const pausedAt = new Date((await claimOf()).paused_at as string).getTime();
    await sleep(Math.max(0, pausedAt + 8_500 - Date.now()));
    const held = await claimOf();
    expect(held.status).toBe('active');
    expect(held.release_reason).toBeNull();
    expect(held.paused_seconds).toBeGreaterThanOrEqual(8);
  }, 20_000);

  it('resumes transparently for a driving call, which succeeds; the clocks move on by the pause', async () => {
    const before = await claimOf();
    const shot = await call('POST', `/v1/claims/${claimId}/screenshot`, {});
    expect(shot.statusCode, shot.body.slice(0, 300)).toBe(200);
    const after = await claimOf();
    expect(after.paused_at).toBeNull();
    expect(after.paused_seconds).toBeGreaterThanOrEqual(8);
    // The heartbeat window moved on by the time paused (it was 7 s wide, heartbeat before pause).
    const heartbeatMoved =
      new Date(after.last_heartbeat_at).getTime() - new Date(before.last_heartbeat_at).getTime();
    expect(heartbeatMoved).toBeGreaterThanOrEqual(8_000);
    expect(new Date(after.expires_at).getTime()).toBeLessThan(
      new Date(after.max_expires_at).getTime(),
    );
    expect(await ticksOver(sandboxPids(sandboxId), 2000)).toBeGreaterThan(0);
    await waitFor(
      async () =>
        recv.received.some(
          (w) => w.payload.type === 'claim.resumed' && w.payload.data.reason === 'drive',
        ),
      10_000,
    );
    const paused = recv.received.find((w) => w.payload.type === 'claim.paused')!;
    expect(paused.payload.data).toMatchObject({ claim_id: claimId, reason: 'api' });
  }, 30_000);

  it('resumes on an explicit call (idempotent) and measures pause/resume latency', async () => {
    const pauseMs: number[] = [];
    const resumeMs: number[] = [];
    for (let i = 0; i < 7; i++) {
      // The 7 s heartbeat window runs while the claim runs: keep it held.
      expect((await call('POST', `/v1/claims/${claimId}/heartbeat`)).statusCode).toBe(200);
      let t = performance.now();
      const p = await call('POST', `/v1/claims/${claimId}/pause`);
      pauseMs.push(performance.now() - t);
      expect(p.json().paused_at).not.toBeNull();
      t = performance.now();
      const r = await call('POST', `/v1/claims/${claimId}/resume`);
      resumeMs.push(performance.now() - t);
      expect(r.statusCode, r.body).toBe(200);
      expect(r.json().paused_at).toBeNull();
    }
    // The floor on this machine now: a guest call's round trip through the same lane.
    const listMs: number[] = [];
    for (let i = 0; i < 7; i++) {
      const t = performance.now();
      expect((await call('GET', `/v1/claims/${claimId}/windows`)).statusCode).toBe(200);
      listMs.push(performance.now() - t);
    }
    console.log(
      `pause p50 ${median(pauseMs).toFixed(1)} ms, resume p50 ${median(resumeMs).toFixed(1)} ms, windows.list p50 ${median(listMs).toFixed(1)} ms (7 each, through the API)`,
    );
    const again = await call('POST', `/v1/claims/${claimId}/resume`);
    expect(again.statusCode).toBe(200);
    expect(again.json().paused_at).toBeNull();
    // Held by the heartbeat window again from here on.
    expect((await call('POST', `/v1/claims/${claimId}/heartbeat`)).statusCode).toBe(200);
  }, 60_000);

  it('resumes for a run start, and the run succeeds', async () => {
    expect((await call('POST', `/v1/claims/${claimId}/heartbeat`)).statusCode).toBe(200);
    expect((await call('POST', `/v1/claims/${claimId}/pause`)).json().paused_at).not.toBeNull();
    const run = await call('POST', `/v1/claims/${claimId}/runs`, { argv: ['/bin/echo', 'woke'] });
    expect(run.statusCode, run.body).toBe(202);
    const runId = run.json().id as string;
    await waitFor(
      async () =>
        ['succeeded', 'failed', 'cancelled'].includes(
          (await call('GET', `/v1/runs/${runId}`)).json().status,
        ),
      30_000,
      200,
    );
    expect((await call('GET', `/v1/runs/${runId}`)).json()).toMatchObject({
      status: 'succeeded',
      exit_code: 0,
    });
    expect((await claimOf()).paused_at).toBeNull();
    await waitFor(
      async () =>
        recv.received.some(
          (w) => w.payload.type === 'claim.resumed' && w.payload.data.reason === 'run',
        ),
      10_000,
    );
  }, 60_000);

  it('resumes for a viewer connecting, whose stream then speaks RFB', async () => {
    const base = await s.api.listen({ host: '127.0.0.1', port: 0 });
    expect((await call('POST', `/v1/claims/${claimId}/heartbeat`)).statusCode).toBe(200);
    expect((await call('POST', `/v1/claims/${claimId}/pause`)).json().paused_at).not.toBeNull();
    const ticket = await call('POST', `/v1/claims/${claimId}/viewer-tickets`, {
      mode: 'view',
      ttl_seconds: 600,
    });
    expect(ticket.statusCode, ticket.body).toBe(201);
    const introspect = await s.api.inject({
      method: 'POST',
      url: '/v1/viewer/introspect',
      payload: { ticket: ticket.json().ticket },
      headers: { host: new URL(base).host },
    });
    expect(introspect.statusCode, introspect.body).toBe(200);
    const viewer = await RawRfbClient.connect(introspect.json().stream_url as string);
    try {
      await viewer.handshake();
      expect(viewer.width).toBeGreaterThan(0);
      expect((await claimOf()).paused_at).toBeNull();
    } finally {
      viewer.ws.close();
    }
    // Its open connection, then its disconnection, count as activity for auto-pause.
  }, 60_000);

  it('auto-pauses a claim idle for its pool idle_pause_seconds, and a call resumes it', async () => {
    const claim = await call('POST', '/v1/pools/autopause/claims', { ttl_seconds: 600 });
    expect(claim.statusCode, claim.body).toBe(201);
    const id = claim.json().id as string;
    expect(claim.json().paused_at).toBeNull();
    // A call keeps it awake: 1 s later it is still running (the idle clock restarted).
    await sleep(1000);
    expect((await call('GET', `/v1/claims/${id}/windows`)).statusCode).toBe(200);
    await sleep(1200);
    expect((await claimOf(id)).paused_at).toBeNull();
    await waitFor(async () => (await claimOf(id)).paused_at !== null, 15_000, 200);
    await waitFor(
      async () =>
        recv.received.some(
          (w) =>
            w.payload.type === 'claim.paused' &&
            w.payload.data.claim_id === id &&
            w.payload.data.reason === 'idle',
        ),
      10_000,
    );
    const shot = await call('POST', `/v1/claims/${id}/screenshot`, {});
    expect(shot.statusCode, shot.body.slice(0, 300)).toBe(200);
    expect((await claimOf(id)).paused_at).toBeNull();
  }, 60_000);

  it('counts paused seconds in usage, apart from the time claims held their desktops', async () => {
    await rollupUsage({ db: s.db });
    const from = new Date(Date.now() - 3_600_000).toISOString();
    const to = new Date(Date.now() + 3_600_000).toISOString();
    const usage = await call(
      'GET',
      `/v1/usage?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}&group_by=pool`,
    );
    expect(usage.statusCode, usage.body).toBe(200);
    const row = (
      usage.json().rows as { pool: string; paused_seconds: number; claim_seconds: number }[]
    ).find((r) => r.pool === 'pause')!;
    expect(row.paused_seconds).toBeGreaterThanOrEqual(8);
    expect(row.claim_seconds).toBeGreaterThan(row.paused_seconds);
    expect(usage.json().totals.paused_seconds).toBeGreaterThanOrEqual(row.paused_seconds);
  }, 30_000);
});

/**
 * Pause where the backend cannot freeze: a Kubernetes Pod (no freezing through the Kubernetes
 * API) is refused with 409 not_supported_by_backend, and so is a KubeVirt VMI here, where the
 * test cluster has KubeVirt's resources but no virt-api serving its pause subresource (the real
 * API server answers the backend's PUT 404). The claim keeps running and answers calls.
 */
describe.each(['kubernetes', 'kubevirt'] as const)('pausing a %s claim', (backend) => {
  let s: Stack;
  const call = (method: string, url: string, payload?: unknown) =>
    s.api.inject({
      method: method as 'GET',
      url,
      headers: s.auth,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });

  beforeAll(async () => {
    s = await startStack({ backend });
  }, 240_000);
  afterAll(async () => s?.close());

  it('is refused with 409 not_supported_by_backend, and the claim still runs', async () => {
    const put = await call('PUT', '/v1/pools/pods', {
      ...s.backend.pool,
      autoscaling: { min: 0, initial: 1, max: 1 },
    });
    expect(put.statusCode, put.body).toBe(201);
    await waitFor(
      async () => (await call('GET', '/v1/pools/pods')).json().counts.warm === 1,
      180_000,
      250,
    );
    const claim = await call('POST', '/v1/pools/pods/claims', { ttl_seconds: 600 });
    expect(claim.statusCode, claim.body).toBe(201);
    const id = claim.json().id as string;
    const refused = await call('POST', `/v1/claims/${id}/pause`);
    expect(refused.statusCode, refused.body).toBe(409);
    expect(refused.json().error.code).toBe('not_supported_by_backend');
    expect(refused.json().error.details).toEqual({ backend });
    const after = await call('GET', `/v1/claims/${id}`);
    expect(after.json().paused_at).toBeNull();
    expect((await call('GET', `/v1/claims/${id}/windows`)).statusCode).toBe(200);
    // Resuming a running claim is a no-op, whatever the backend.
    expect((await call('POST', `/v1/claims/${id}/resume`)).statusCode).toBe(200);
  }, 240_000);
});
