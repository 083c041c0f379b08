import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { redisOptionsFromUrl } from '@cubicle/config';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestRedisNamespace } from '../../../test/harness/index.js';
import { LaneDispatcher, SandboxLanes, type LaneJob, type TakenJob } from '../src/index.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const job = (id: string, data: unknown = {}): LaneJob => ({
  id,
  name: 'guest.call',
  data,
  timestamp: Date.now(),
  attempts: 1,
  backoffMs: 0,
});

/**
 * Sandbox lanes on a real Redis: the guarantees guest calls rely on (one at a time and in order
 * per sandbox, parallel across sandboxes, never run twice, even when a worker process is killed
 * mid-job) with a constant number of connections per process, whatever the number of lanes.
 */
describe('sandbox lanes on real Redis', () => {
  const ns = createTestRedisNamespace();
  const opened: Redis[] = [];
  const dispatchers: LaneDispatcher[] = [];
  /** connect opens a connection named `name`, so CLIENT LIST can count one "process" apart. */
  const connect = (name: string) => {
    const r = new Redis({
      ...redisOptionsFromUrl(ns.url),
      maxRetriesPerRequest: null,
      connectionName: name,
    });
    opened.push(r);
    return r;
  };
  let admin: Redis;
  const clientsNamed = async (name: string) =>
    ((await admin.client('LIST')) as string).split('\n').filter((l) => l.includes(` name=${name} `))
      .length;

  beforeAll(() => {
    admin = connect('lanes-admin');
  });
  afterAll(async () => {
    await Promise.all(dispatchers.map((d) => d.close()));
    for (const r of opened) r.disconnect();
    await ns.cleanup();
  });

  it('runs each lane one job at a time in push order, lanes in parallel, every job once, across two processes', async () => {
    const prefix = `${ns.bullPrefix}a`;
    const lanes = new SandboxLanes(connect('lanes-producer'), prefix);
    const runs: { lane: string; seq: number; start: number; end: number; by: string }[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const handler = (by: string) => async (j: TakenJob) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const start = performance.now();
      await sleep(1 + Math.random() * 4);
      inFlight--;
      runs.push({
        lane: j.lane,
        seq: (j.data as { seq: number }).seq,
        start,
        end: performance.now(),
        by,
      });
    };
    for (const name of ['lanes-p1', 'lanes-p2']) {
      const d = new LaneDispatcher({
        connection: connect(name),
        prefix,
        concurrency: 16,
        handler: handler(name),
      });
      dispatchers.push(d);
      d.start();
    }
    const LANES = 200;
    const PER_LANE = 5;
    // Interleaved pushes, as concurrent callers on many sandboxes make them.
    for (let seq = 0; seq < PER_LANE; seq++)
      await Promise.all(
        Array.from({ length: LANES }, (_, l) =>
          lanes.push(`sbx_${l}`, job(`j${l}.${seq}`, { seq })),
        ),
      );
    const deadline = Date.now() + 30_000;
    while (runs.length < LANES * PER_LANE && Date.now() < deadline) await sleep(50);

    expect(runs).toHaveLength(LANES * PER_LANE);
    const ids = new Set(runs.map((r) => `${r.lane}.${r.seq}`));
    expect(ids.size).toBe(LANES * PER_LANE); // never twice
    for (let l = 0; l < LANES; l++) {
      const mine = runs.filter((r) => r.lane === `sbx_${l}`).sort((a, b) => a.start - b.start);
      expect(mine.map((r) => r.seq)).toEqual([0, 1, 2, 3, 4]); // in order
      for (let k = 1; k < mine.length; k++)
        expect(mine[k]!.start).toBeGreaterThanOrEqual(mine[k - 1]!.end); // one at a time
    }
    expect(maxInFlight).toBeGreaterThan(1); // parallel across lanes
    expect(new Set(runs.map((r) => r.by)).size).toBe(2); // both processes took work
    expect(await admin.hlen(`${prefix}:lanes:active`)).toBe(0);
    expect(await admin.llen(`${prefix}:lanes:ready`)).toBe(0);
  });

  it('holds two Redis connections per dispatcher however many lanes it serves', async () => {
    const prefix = `${ns.bullPrefix}c`;
    const lanes = new SandboxLanes(connect('lanes-producer-c'), prefix);
    let done = 0;
    const d = new LaneDispatcher({
      connection: connect('lanes-conn'),
      prefix,
      concurrency: 64,
      handler: async () => {
        await sleep(2);
        done++;
      },
    });
    dispatchers.push(d);
    d.start();
    await lanes.push('sbx_one', job('one'));
    while (done < 1) await sleep(20);
    const before = await clientsNamed('lanes-conn');
    await Promise.all(
      Array.from({ length: 1_000 }, (_, l) => lanes.push(`sbx_${l}`, job(`c${l}`))),
    );
    while (done < 1_001) await sleep(20);
    const after = await clientsNamed('lanes-conn');
    expect(before).toBe(2);
    expect(after).toBe(2);
    // `done` counts in the handler; the dispatcher lets a lane go only after acknowledging its
    // job in Redis, a moment later (CI saw 6 still held right after the last handler returned).
    const deadline = Date.now() + 5_000;
    while (d.stats().running > 0 && Date.now() < deadline) await sleep(10);
    expect(d.stats()).toEqual({ running: 0 });
  });

  it('never runs again the job of a worker killed mid-job, and the lane goes on after its lease', async () => {
    const prefix = `${ns.bullPrefix}k`;
    const lanes = new SandboxLanes(connect('lanes-producer-k'), prefix);
    await lanes.push('sbx_k', job('k1', { seq: 1 }));
    await lanes.push('sbx_k', job('k2', { seq: 2 }));
    await lanes.push('sbx_k', job('k3', { seq: 3 }));
    // A real process that takes k1 and hangs in it, then is killed with SIGKILL.
    const dist = fileURLToPath(new URL('../dist/index.js', import.meta.url));
    const child = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { LaneDispatcher } from ${JSON.stringify(dist)};
         import { Redis } from 'ioredis';
         const d = new LaneDispatcher({
           connection: new Redis(${JSON.stringify({ ...redisOptionsFromUrl(ns.url), maxRetriesPerRequest: null })}),
           prefix: ${JSON.stringify(prefix)}, concurrency: 1, leaseMs: 1500,
           handler: (j) => { process.stdout.write('started ' + j.id + '\\n'); return new Promise(() => {}); },
         });
         d.start();`,
      ],
      { cwd: fileURLToPath(new URL('..', import.meta.url)), stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const deadline = Date.now() + 15_000;
    while (!out.includes('started k1') && Date.now() < deadline) await sleep(20);
    expect(out).toBe('started k1\n');
    child.kill('SIGKILL');
    await once(child, 'exit');

    const ran: string[] = [];
    const lost: string[] = [];
    const d = new LaneDispatcher({
      connection: connect('lanes-survivor'),
      prefix,
      leaseMs: 1500,
      handler: async (j) => void ran.push(j.id),
      onLost: ({ lane, jobId }) => lost.push(`${lane}:${jobId}`),
    });
    dispatchers.push(d);
    d.start();
    // While the dead holder's lease runs, the lane's next job waits (one at a time per sandbox).
    await sleep(200);
    expect(ran).toEqual([]);
    while (ran.length < 2 && Date.now() < deadline) await sleep(20);
    expect(lost).toEqual(['sbx_k:k1']);
    expect(ran).toEqual(['k2', 'k3']);
    await sleep(1_600);
    expect(ran).toEqual(['k2', 'k3']); // k1 never again
  });

  it("publishes a job's laneReply as it frees the lane: whoever the reply wakes finds the lane free", async () => {
    const prefix = `${ns.bullPrefix}r`;
    const lanes = new SandboxLanes(connect('lanes-reply-producer'), prefix);
    const listener = connect('lanes-reply-listener');
    const heard: { message: string; laneBusy: number }[] = [];
    listener.on('message', (_channel: string, message: string) => {
      // Asked at once, on another connection: the lane's state when the reply was out.
      void lanes.running().then((busy) => heard.push({ message, laneBusy: busy }));
    });
    await listener.subscribe(`${prefix}:replies`);
    const d = new LaneDispatcher({
      connection: connect('lanes-reply-worker'),
      prefix,
      handler: async (j) => ({
        laneReply: { channel: `${prefix}:replies`, message: `done ${j.id}` },
      }),
    });
    dispatchers.push(d);
    d.start();
    await lanes.push('sbx_r', job('r1'));
    await lanes.push('sbx_r', job('r2'));
    const deadline = Date.now() + 15_000;
    while (heard.length < 2 && Date.now() < deadline) await sleep(20);
    expect(heard.map((h) => h.message)).toEqual(['done r1', 'done r2']);
    // r2 ends with nothing behind it: when its reply is heard, no lane is held any more.
    expect(heard[1]!.laneBusy).toBe(0);
  });
});
