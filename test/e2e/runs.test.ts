import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { readSse } from './support/run-events.js';
import { startStack, waitFor, type Stack } from './support/stack.js';

interface RunEvent {
  run_id: string;
  seq: number;
  type: string;
  data: Record<string, unknown>;
}

/**
 * Runs end to end: REST (inject, and a real loopback listener for the live streams) → Postgres
 * → BullMQ → the worker process → the guest's shell stream in a real desktop, with events
 * persisted in order and published on Redis.
 */
describe('runs in a claimed desktop', () => {
  let s: Stack;
  let claimId: string;
  let baseUrl: string;
  const call = (
    method: string,
    url: string,
    payload?: unknown,
    headers: Record<string, string> = {},
  ) =>
    s.api.inject({
      method: method as 'GET',
      url,
      ...(payload === undefined ? {} : { payload: payload as object }),
      headers: { ...s.auth, ...headers },
    });
  const start = async (body: Record<string, unknown>) => {
    const res = await call('POST', `/v1/claims/${claimId}/runs`, body);
    expect(res.statusCode, res.body).toBe(202);
    return res.json() as { id: string; status: string };
  };
  const finished = async (runId: string, timeoutMs = 30_000) => {
    await waitFor(
      async () =>
        ['succeeded', 'failed', 'cancelled'].includes(
          (await call('GET', `/v1/runs/${runId}`)).json().status,
        ),
      timeoutMs,
      50,
    );
    return (await call('GET', `/v1/runs/${runId}`)).json();
  };
  const allEvents = async (runId: string): Promise<RunEvent[]> => {
    const out: RunEvent[] = [];
    for (let after = 0; ;) {
      const page = (
        await call('GET', `/v1/runs/${runId}/events?after_seq=${after}&limit=1000`)
      ).json();
      out.push(...page.data);
      after = page.next_after_seq;
      if (page.data.length === 0) return out;
    }
  };
  const text = (events: RunEvent[], type: 'stdout' | 'stderr') =>
    events
      .filter((e) => e.type === type)
      .map((e) => e.data.text as string)
      .join('');
  const expectDense = (events: RunEvent[]) =>
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  const runCount = async () => s.db.run.count();
  const listen = async () => {
    baseUrl = await s.api.listen({ host: '127.0.0.1', port: 0 });
  };

  beforeAll(async () => {
    s = await startStack();
    expect(
      (
        await call('PUT', '/v1/pools/runs', {
          image: 'local',
          autoscaling: { min: 0, initial: 1, max: 2 },
        })
      ).statusCode,
    ).toBe(201);
    await waitFor(
      async () => (await call('GET', '/v1/pools/runs')).json().counts.warm === 1,
      120_000,
      250,
    );
    const claim = await call('POST', '/v1/pools/runs/claims', { ttl_seconds: 1800 });
    expect(claim.statusCode).toBe(201);
    claimId = claim.json().id;
    await listen();
  });
  afterAll(async () => s?.close());

  it('refuses bad input with a clear code and stores nothing', async () => {
    const before = await runCount();
    const empty = await call('POST', `/v1/claims/${claimId}/runs`, { argv: [] });
    expect(empty.statusCode).toBe(400);
    expect(empty.json().error.code).toBe('validation_failed');
    const secret = await call('POST', `/v1/claims/${claimId}/runs`, {
      argv: ['true'],
      secrets: ['NO_SUCH_SECRET'],
    });
    expect(secret.statusCode).toBe(400);
    expect(secret.json().error.message).toContain('NO_SUCH_SECRET');
    expect(secret.json().error.details.unknown_secrets).toEqual(['NO_SUCH_SECRET']);
    const badTimeout = await call('POST', `/v1/claims/${claimId}/runs`, {
      argv: ['true'],
      timeout_seconds: 0,
    });
    expect(badTimeout.statusCode).toBe(400);
    expect((await call('GET', '/v1/runs/not-a-run')).json().error.code).toBe('invalid_id');
    expect(await runCount()).toBe(before);
  });

  it('runs a command: exit codes, stdout and stderr in order, dense events, idempotent create', async () => {
    const ok = await start({ argv: ['/bin/sh', '-c', 'echo out; echo err >&2; exit 0'] });
    expect(ok.status).toBe('queued');
    const okRun = await finished(ok.id);
    expect(okRun).toMatchObject({ status: 'succeeded', exit_code: 0, end_reason: 'exited' });
    const events = await allEvents(ok.id);
    expectDense(events);
    expect(events[0]).toMatchObject({ type: 'status', data: { status: 'queued' } });
    expect(events[1]).toMatchObject({ type: 'status', data: { status: 'running' } });
    expect(events.at(-2)).toMatchObject({ type: 'exit', data: { exit_code: 0, timed_out: false } });
    expect(events.at(-1)).toMatchObject({
      type: 'status',
      data: { status: 'succeeded', reason: 'exited' },
    });
    expect(text(events, 'stdout')).toBe('out\n');
    expect(text(events, 'stderr')).toBe('err\n');
    expect(okRun.last_seq).toBe(events.length);

    const three = await finished((await start({ argv: ['/bin/sh', '-c', 'exit 3'] })).id);
    expect(three).toMatchObject({ status: 'failed', exit_code: 3, end_reason: 'exited' });
    const missing = await finished((await start({ argv: ['/no/such/program'] })).id);
    expect(missing).toMatchObject({ status: 'failed', end_reason: 'start_failed' });
    expect(missing.end_detail).toContain('/no/such/program');

    const body = { argv: ['/bin/echo', 'once'] };
    const key = { 'idempotency-key': `runs-${Date.now()}` };
    const first = await call('POST', `/v1/claims/${claimId}/runs`, body, key);
    const again = await call('POST', `/v1/claims/${claimId}/runs`, body, key);
    expect(first.statusCode).toBe(202);
    expect(again.statusCode).toBe(202);
    expect(again.json().id).toBe(first.json().id);
    const other = await call(
      'POST',
      `/v1/claims/${claimId}/runs`,
      { argv: ['/bin/echo', 'twice'] },
      key,
    );
    expect(other.statusCode).toBe(409);
    expect(other.json().error.code).toBe('idempotency_key_reused');
    await finished(first.json().id);
    expect(
      (await call('GET', `/v1/claims/${claimId}/runs?limit=200`))
        .json()
        .data.map((r: { id: string }) => r.id),
    ).toContain(first.json().id);
    // Another tenant sees none of it.
    const foreign = await s.api.inject({
      method: 'GET',
      url: `/v1/runs/${ok.id}`,
      headers: s.other.auth,
    });
    expect(foreign.statusCode).toBe(404);
  });

  it('stdin reaches the process in order, sent before and after it started; eof ends it', async () => {
    const run = await start({ argv: ['/bin/cat'] });
    expect((await call('POST', `/v1/runs/${run.id}/stdin`, { data: 'one\n' })).statusCode).toBe(
      202,
    );
    await waitFor(
      async () => (await call('GET', `/v1/runs/${run.id}`)).json().status === 'running',
      20_000,
      50,
    );
    expect(
      (await call('POST', `/v1/runs/${run.id}/stdin`, { data: 'dHdvCg==', encoding: 'base64' }))
        .statusCode,
    ).toBe(202);
    expect(
      (await call('POST', `/v1/runs/${run.id}/stdin`, { data: 'three\n', eof: true })).statusCode,
    ).toBe(202);
    const done = await finished(run.id);
    expect(done).toMatchObject({ status: 'succeeded', exit_code: 0 });
    expect(text(await allEvents(run.id), 'stdout')).toBe('one\ntwo\nthree\n');
    const late = await call('POST', `/v1/runs/${run.id}/stdin`, { data: 'x' });
    expect(late.statusCode).toBe(409);
  });

  it('cancel: SIGINT to the group, then SIGKILL after the grace period; timeout kills the group and says so', async () => {
    const polite = await start({
      argv: [
        '/bin/sh',
        '-c',
        'trap "echo interrupted; exit 130" INT; echo ready; while :; do sleep 0.05; done',
      ],
    });
    await waitFor(
      async () => text(await allEvents(polite.id), 'stdout').includes('ready'),
      20_000,
      50,
    );
    expect((await call('POST', `/v1/runs/${polite.id}/cancel`, {})).statusCode).toBe(202);
    const cancelled = await finished(polite.id);
    expect(cancelled).toMatchObject({
      status: 'cancelled',
      end_reason: 'cancelled',
      exit_code: 130,
    });
    expect(text(await allEvents(polite.id), 'stdout')).toContain('interrupted');
    // Cancelling again changes nothing.
    const again = await call('POST', `/v1/runs/${polite.id}/cancel`, {});
    expect(again.json()).toMatchObject({ status: 'cancelled', finished_at: cancelled.finished_at });

    const stubborn = await start({
      argv: ['/bin/sh', '-c', 'trap "" INT; echo ready; while :; do sleep 0.05; done'],
    });
    await waitFor(
      async () => text(await allEvents(stubborn.id), 'stdout').includes('ready'),
      20_000,
      50,
    );
    const t0 = Date.now();
    await call('POST', `/v1/runs/${stubborn.id}/cancel`, { grace_seconds: 1 });
    const killed = await finished(stubborn.id);
    expect(killed).toMatchObject({
      status: 'cancelled',
      end_reason: 'cancelled',
      signal: 'SIGKILL',
    });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);

    const slow = await start({ argv: ['/bin/sleep', '60'], timeout_seconds: 1 });
    const timedOut = await finished(slow.id);
    expect(timedOut).toMatchObject({ status: 'failed', end_reason: 'timeout' });
    expect((await allEvents(slow.id)).find((e) => e.type === 'exit')?.data.timed_out).toBe(true);

    // A queued run cancelled before a worker takes it never starts.
    const queued = await s.db.run.count({ where: { status: 'cancelled' } });
    expect(queued).toBeGreaterThanOrEqual(2);
  });

  it('SSE: a reader that drops at seq k and resumes with Last-Event-ID k gets k+1… exactly once', async () => {
    const run = await start({
      argv: ['/bin/sh', '-c', 'for i in $(seq 1 40); do echo line-$i; sleep 0.03; done'],
    });
    const seen: RunEvent[] = [];
    const k = 8;
    const first = await readSse(baseUrl, `/v1/runs/${run.id}/events/stream`, s.auth, (e) => {
      seen.push(JSON.parse(e.data));
      return e.id !== k;
    });
    expect(first).toMatchObject({ status: 200, ended: false });
    expect(seen.at(-1)!.seq).toBe(k);
    const second = await readSse(
      baseUrl,
      `/v1/runs/${run.id}/events/stream`,
      { ...s.auth, 'last-event-id': String(k) },
      (e) => void seen.push(JSON.parse(e.data)),
    );
    expect(second.ended).toBe(true);
    expectDense(seen);
    expect(seen.at(-1)).toMatchObject({ type: 'status', data: { status: 'succeeded' } });
    expect(text(seen, 'stdout')).toBe(
      Array.from({ length: 40 }, (_, i) => `line-${i + 1}\n`).join(''),
    );

    // The WebSocket form serves the same log.
    const ws = new WebSocket(
      `${baseUrl.replace('http', 'ws')}/v1/runs/${run.id}/events/ws?after_seq=0`,
      {
        headers: s.auth,
      },
    );
    const viaWs: RunEvent[] = [];
    ws.on('message', (m) => viaWs.push(JSON.parse(m.toString())));
    const code = await new Promise<number>((resolve) => ws.on('close', (c) => resolve(c)));
    expect(code).toBe(1000);
    expect(viaWs).toEqual(seen.map((e) => ({ ...e })));
  });

  it('10 MB of stdout arrives intact and in order, live and from the log', async () => {
    const lines = 1_000_000;
    const run = await start({
      argv: ['/usr/bin/awk', `BEGIN { for (i = 0; i < ${lines}; i++) printf "%09d\\n", i }`],
    });
    let live = '';
    let last = 0;
    const read = await readSse(baseUrl, `/v1/runs/${run.id}/events/stream`, s.auth, (e) => {
      const event = JSON.parse(e.data) as RunEvent;
      expect(event.seq).toBe(last + 1);
      last = event.seq;
      if (event.type === 'stdout') live += event.data.text as string;
    });
    expect(read.ended).toBe(true);
    const expected = Array.from(
      { length: lines },
      (_, i) => `${String(i).padStart(9, '0')}\n`,
    ).join('');
    expect(live.length).toBe(10_000_000);
    expect(live === expected).toBe(true);
    expect(text(await allEvents(run.id), 'stdout') === expected).toBe(true);
    expect(await finished(run.id)).toMatchObject({ status: 'succeeded' });
  }, 180_000);

  it('an API restart mid-run does not disturb it; its events stream on from the new API', async () => {
    const run = await start({
      argv: ['/bin/sh', '-c', 'for i in $(seq 1 30); do echo tick-$i; sleep 0.1; done'],
    });
    const seen: RunEvent[] = [];
    await readSse(baseUrl, `/v1/runs/${run.id}/events/stream`, s.auth, (e) => {
      seen.push(JSON.parse(e.data));
      return seen.length < 6;
    });
    await s.restartApi();
    await listen();
    const resumed = await readSse(
      baseUrl,
      `/v1/runs/${run.id}/events/stream`,
      { ...s.auth, 'last-event-id': String(seen.at(-1)!.seq) },
      (e) => void seen.push(JSON.parse(e.data)),
    );
    expect(resumed.ended).toBe(true);
    expectDense(seen);
    expect(text(seen, 'stdout')).toBe(
      Array.from({ length: 30 }, (_, i) => `tick-${i + 1}\n`).join(''),
    );
    expect((await finished(run.id)).status).toBe('succeeded');
  });

  it('kill -9 of the worker mid-run: the run ends failed/worker_lost and its process group is gone', async () => {
    const run = await start({ argv: ['/bin/sh', '-c', 'echo pid=$$; sleep 300'] });
    await waitFor(async () => text(await allEvents(run.id), 'stdout').includes('pid='), 20_000, 50);
    const pid = Number(/pid=(\d+)/.exec(text(await allEvents(run.id), 'stdout'))![1]);
    // The desktop has its own pid namespace: ask inside it whether the process still lives.
    const alive = async () =>
      (
        await call('POST', `/v1/claims/${claimId}/shell`, {
          argv: ['/bin/sh', '-c', `kill -0 ${pid} 2>/dev/null && echo alive || echo gone`],
        })
      ).json().stdout as string;
    expect(await alive()).toBe('alive\n');
    await s.restartWorker({ crash: true });
    const lost = await finished(run.id, 40_000);
    expect(lost).toMatchObject({ status: 'failed', end_reason: 'worker_lost' });
    await waitFor(async () => (await alive()) === 'gone\n', 10_000, 250);
    // The new worker runs new runs.
    expect((await finished((await start({ argv: ['/bin/true'] })).id)).status).toBe('succeeded');
  }, 90_000);

  it("a claim's release cancels its running runs and records why", async () => {
    const run = await start({ argv: ['/bin/sh', '-c', 'echo up; sleep 300'] });
    await waitFor(async () => text(await allEvents(run.id), 'stdout').includes('up'), 20_000, 50);
    expect((await call('DELETE', `/v1/claims/${claimId}`)).statusCode).toBeLessThan(300);
    const ended = await finished(run.id, 30_000);
    expect(ended).toMatchObject({
      status: 'cancelled',
      end_reason: 'claim_ended',
      end_detail: 'released_by_client',
    });
    const after = await call('POST', `/v1/claims/${claimId}/runs`, { argv: ['/bin/true'] });
    expect(after.statusCode).toBe(409);
    expect(after.json().error.code).toBe('claim_not_active');
  });
});
