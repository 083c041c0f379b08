import { CreateClaimRequest, PoolSpec } from '@cubicle/contract/api';
import { newId, sqlPoolOf } from '@cubicle/db';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  applyPool,
  createClaimWithSecrets,
  createResources,
  type Resources,
} from '../src/index.js';
import type { NewRunEvent } from '../src/runs/append-run-events.js';
import { decodeRunEventBatch, runEventsChannel } from '../src/runs/run-channels.js';
import { commitRunEvents } from '../src/runs/run-event-committer.js';
import { createQueueConnection } from '@cubicle/queue';
import { createTestRedisNamespace } from '../../../test/harness/index.js';
import { seedWarm, world, type World } from './setup.js';

const out = (text: string): NewRunEvent => ({ type: 'stdout', data: { text } });

// The worker's group commit (commitRunEvents): batches of many runs share one statement and one
// Redis write. These check what each run must still get from it: dense seqs in its own order,
// durability before announcement, and no neighbour's failure.
describe('run event group commit (real Postgres and Redis)', () => {
  let w: World;
  let redis: Redis;
  let subscriber: Redis;
  let prefix: string;
  let claimId: string;
  // The worker's control plane: its own Redis connection and prefix for run events.
  const deps = () => resources;
  let resources: Resources;

  beforeAll(async () => {
    w = await world();
    const ns = createTestRedisNamespace();
    prefix = ns.bullPrefix;
    redis = createQueueConnection(ns.url);
    subscriber = createQueueConnection(ns.url);
    resources = createResources({ ...w.deps, redis, prefix });
    const { pool } = await applyPool(w.deps, w.tenantId, 'runs', PoolSpec.parse({ image: 'img' }));
    await seedWarm(w.db, w.tenantId, pool.id, 1);
    const claim = await createClaimWithSecrets(
      w.deps,
      w.tenantId,
      'runs',
      CreateClaimRequest.parse({ wait_seconds: 0 }),
    );
    claimId = claim.claim.id;
  });
  afterAll(async () => {
    subscriber?.disconnect();
    redis?.disconnect();
    await w?.close();
  });

  const newRuns = async (n: number) => {
    const ids = Array.from({ length: n }, () => newId('run'));
    await w.db.run.createMany({
      data: ids.map((id) => ({
        id,
        tenantId: w.tenantId,
        claimId,
        argv: ['x'],
        timeoutSeconds: 60,
      })),
    });
    return ids;
  };
  const stored = (runId: string) =>
    w.db.runEvent.findMany({ where: { runId }, orderBy: { seq: 'asc' } });

  it('batches that arrive together share one transaction; each run keeps its own dense seqs', async () => {
    const runs = await newRuns(5);
    // The first starts a commit at once; the other four wait for it and go in the next one.
    const results = await Promise.all(
      runs.map((runId, i) => commitRunEvents(deps(), runId, [out(`a${i}`), out(`b${i}`)])),
    );
    results.forEach((events, i) => {
      expect(events.map((e) => [e.run_id, e.seq, e.data.text])).toEqual([
        [runs[i], 1, `a${i}`],
        [runs[i], 2, `b${i}`],
      ]);
    });
    // Rows written by one transaction carry its id (xmin).
    const { rows } = await sqlPoolOf(w.db).query<{ run_id: string; tx: string }>(
      'SELECT DISTINCT run_id, xmin::text AS tx FROM run_events WHERE run_id = ANY($1)',
      [runs],
    );
    const txOf = new Map(rows.map((r) => [r.run_id, r.tx]));
    expect(rows).toHaveLength(5);
    expect(new Set(runs.slice(1).map((r) => txOf.get(r))).size).toBe(1);
    expect(txOf.get(runs[0]!)).not.toBe(txOf.get(runs[1]!));
  });

  it('many runs, each committing one batch at a time as a log does: every seq once, in order', async () => {
    const runs = await newRuns(12);
    await Promise.all(
      runs.map(async (runId, r) => {
        for (let b = 0; b < 15; b++) {
          const events = await commitRunEvents(deps(), runId, [
            out(`${r}.${b}.0`),
            out(`${r}.${b}.1`),
          ]);
          expect(events.map((e) => e.seq)).toEqual([b * 2 + 1, b * 2 + 2]);
        }
      }),
    );
    for (const [r, runId] of runs.entries()) {
      const rows = await stored(runId);
      expect(rows.map((e) => e.seq)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
      expect(rows.map((e) => (e.data as { text: string }).text)).toEqual(
        Array.from({ length: 30 }, (_, i) => `${r}.${Math.floor(i / 2)}.${i % 2}`),
      );
      expect((await w.db.run.findUniqueOrThrow({ where: { id: runId } })).lastSeq).toBe(30);
    }
  });

  it('a batch is announced only once it is stored, as the events the writer got back', async () => {
    const [runId] = await newRuns(1);
    const seen: { events: ReturnType<typeof decodeRunEventBatch>; inDb: number }[] = [];
    const got = new Promise<void>((resolve) => {
      subscriber.on('message', (_channel, message) => {
        const events = decodeRunEventBatch(message);
        // Read the log at the moment the message arrives.
        void stored(runId!).then((rows) => {
          seen.push({ events, inDb: rows.length });
          resolve();
        });
      });
    });
    await subscriber.subscribe(runEventsChannel(prefix, runId!));
    const events = await commitRunEvents(deps(), runId!, [out('one'), out('two'), out('three')]);
    await got;
    expect(seen).toEqual([{ events, inDb: 3 }]);
  });

  it('an unknown run stores nothing and gets []; a batch the database refuses fails alone', async () => {
    const [good, poisoned] = await newRuns(2);
    const [unknown, ok, refused] = await Promise.allSettled([
      commitRunEvents(deps(), newId('run'), [out('nobody')]),
      commitRunEvents(deps(), good!, [out('fine')]),
      // jsonb refuses U+0000 (the event log cleans text first; this bypasses it on purpose).
      commitRunEvents(deps(), poisoned!, [out('bad\u0000')]),
    ]);
    expect(unknown).toEqual({ status: 'fulfilled', value: [] });
    expect(ok.status === 'fulfilled' && ok.value.map((e) => e.seq)).toEqual([1]);
    expect(refused.status).toBe('rejected');
    expect((await stored(good!)).map((e) => (e.data as { text: string }).text)).toEqual(['fine']);
    expect(await stored(poisoned!)).toEqual([]);
    expect((await w.db.run.findUniqueOrThrow({ where: { id: poisoned! } })).lastSeq).toBe(0);
  });
});
