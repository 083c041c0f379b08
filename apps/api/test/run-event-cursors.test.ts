// Cursors the schema allows (after_seq up to 2^53−1) but no run reaches: the fuzzer found
// `?after_seq=2147483648` answering 500 (seq is a Postgres integer) and the SSE stream closing at
// once with no `end`. A cursor past a run's last seq is a reader with nothing left to read: the
// page is empty, and the live streams end when the run has ended, or follow it to its end.
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSse } from '../../../test/e2e/support/run-events.js';
import { fullAppFixture, type FullAppFixture } from './full-app-fixture.js';

const PAST_INT4 = 2 ** 31;
const MAX = Number.MAX_SAFE_INTEGER;

describe('run event cursors past the last seq', () => {
  let fx: FullAppFixture;
  let base: string;
  let claimId: string;
  const auth = () => ({ authorization: fx.a.admin });

  beforeAll(async () => {
    fx = await fullAppFixture();
    base = await fx.app.listen({ host: '127.0.0.1', port: 0 });
    claimId = (await fx.claim('cursors')).id;
  });
  afterAll(async () => fx?.close());

  /** A queued run (no worker runs here, so it stays queued until cancelled). */
  const queuedRun = async () => {
    const res = await fx.app.inject({
      method: 'POST',
      url: `/v1/claims/${claimId}/runs`,
      headers: auth(),
      payload: { argv: ['/bin/true'] },
    });
    expect(res.statusCode, res.body).toBe(202);
    return res.json<{ id: string }>().id;
  };
  const cancel = async (runId: string) => {
    const res = await fx.app.inject({
      method: 'POST',
      url: `/v1/runs/${runId}/cancel`,
      headers: auth(),
      payload: {},
    });
    expect(res.statusCode, res.body).toBe(202);
    return res.json<{ status: string; last_seq: number }>();
  };

  it('a page after a cursor past the end is empty and says so', async () => {
    const runId = await queuedRun();
    const ended = await cancel(runId);
    expect(ended.status).toBe('cancelled');
    for (const afterSeq of [PAST_INT4, MAX]) {
      const res = await fx.app.inject({
        method: 'GET',
        url: `/v1/runs/${runId}/events?after_seq=${afterSeq}`,
        headers: auth(),
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ data: [], next_after_seq: afterSeq, complete: true });
    }
  });

  it('the SSE stream of an ended run ends at once with `end` for such a cursor', async () => {
    const runId = await queuedRun();
    await cancel(runId);
    for (const afterSeq of [PAST_INT4, MAX]) {
      const events: unknown[] = [];
      const read = await readSse(
        base,
        `/v1/runs/${runId}/events/stream?after_seq=${afterSeq}`,
        auth(),
        (e) => void events.push(e),
      );
      expect(read).toEqual({ status: 200, ended: true });
      expect(events).toEqual([]);
    }
  });

  it('the SSE stream of a live run follows it to its final status and `end`', async () => {
    const runId = await queuedRun();
    const seen: { type: string; data: { status?: string } }[] = [];
    const reading = readSse(
      base,
      `/v1/runs/${runId}/events/stream?after_seq=${PAST_INT4}`,
      auth(),
      (e) => void seen.push(JSON.parse(e.data)),
    );
    // The stream is open and following before the run ends (its headers came back).
    await new Promise((resolve) => setTimeout(resolve, 300));
    await cancel(runId);
    expect(await reading).toEqual({ status: 200, ended: true });
    expect(seen.at(-1)).toMatchObject({ type: 'status', data: { status: 'cancelled' } });
  });

  it('the WebSocket of an ended run closes at once with 1000 for such a cursor', async () => {
    const runId = await queuedRun();
    await cancel(runId);
    const ws = new WebSocket(
      `${base.replace('http', 'ws')}/v1/runs/${runId}/events/ws?after_seq=${PAST_INT4}`,
      { headers: auth() },
    );
    const frames: string[] = [];
    ws.on('message', (m: Buffer) => frames.push(m.toString()));
    const [code, reason] = await new Promise<[number, string]>((resolve) =>
      ws.on('close', (c: number, r: Buffer) => resolve([c, r.toString()])),
    );
    expect({ code, reason, frames }).toEqual({ code: 1000, reason: 'run ended', frames: [] });
  });
});
