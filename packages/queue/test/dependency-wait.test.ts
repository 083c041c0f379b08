import { QueueEvents, type Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestRedisNamespace } from '../../../test/harness/index.js';
import { createQueueConnection, JobQueues, startWorkers } from '../src/index.js';

const tenant = 'ten_01h00000000000000000000000';
const sandboxId = (n: number) => `sbx_01h0000000000000000000000${n}`;

/**
 * Jobs and unreachable dependencies on real Redis (issue 11 §8): a handler failing because the
 * database is away runs again without spending attempts, and a job id whose job failed can be
 * enqueued again.
 */
describe('jobs waiting for a dependency', () => {
  let ns: ReturnType<typeof createTestRedisNamespace>;
  let conn: Redis;
  let queues: JobQueues;
  let workers: Worker[] = [];
  let events: QueueEvents;
  const runs = new Map<string, number>();
  const waits: number[] = [];

  beforeAll(async () => {
    ns = createTestRedisNamespace();
    conn = createQueueConnection(ns.url);
    queues = new JobQueues(conn, ns.bullPrefix);
    workers = startWorkers({
      connection: createQueueConnection(ns.url),
      prefix: ns.bullPrefix,
      queues: ['sandboxes'],
      dependencyWait: { initialMs: 20, maxMs: 50, giveUpAfterMs: 60_000 },
      onDependencyWait: (_job, _err, delayMs) => waits.push(delayMs),
      handlers: {
        // Five runs find "the database" away (as Prisma reports a stopped Postgres), then it is back.
        'sandbox.provision': async ({ sandbox_id }) => {
          const n = (runs.get(sandbox_id) ?? 0) + 1;
          runs.set(sandbox_id, n);
          if (n <= 5)
            throw Object.assign(new Error('connect ENOENT /tmp/pg/.s.PGSQL.5432'), {
              code: 'ENOENT',
            });
          return { run: n };
        },
        // Always the work's own failure: spends its attempts.
        'sandbox.destroy': async () => {
          throw new Error('the backend refused');
        },
      },
    });
    events = new QueueEvents('sandboxes', {
      connection: createQueueConnection(ns.url),
      prefix: ns.bullPrefix,
    });
    await events.waitUntilReady();
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.close()));
    await events?.close();
    await queues?.close();
    conn?.disconnect();
    await ns?.cleanup();
  });

  it('runs a job again past its attempts while the database is unreachable, spending none', async () => {
    const job = await queues.enqueue(
      'sandbox.provision',
      { tenant_id: tenant, sandbox_id: sandboxId(1) },
      { jobId: 'provision-1' },
    );
    expect(job.opts.attempts).toBe(3);
    expect(await job.waitUntilFinished(events, 20_000)).toEqual({ run: 6 });
    const done = await queues.queue('sandboxes').getJob('provision-1');
    // Six runs, one attempt: the successful one.
    expect(done?.attemptsMade).toBe(1);
    expect(waits.slice(0, 5)).toEqual([20, 40, 50, 50, 50]);
  });

  it('does not run again a job the catalog never retries', async () => {
    const job = await queues
      .queue('sandboxes')
      .add(
        'sandbox.provision',
        { tenant_id: tenant, sandbox_id: sandboxId(3) },
        { jobId: 'provision-3', attempts: 1 },
      );
    await expect(job.waitUntilFinished(events, 20_000)).rejects.toThrow(/ENOENT/);
    expect(runs.get(sandboxId(3))).toBe(1);
  });

  it('enqueues a job again under the id of one that failed, when asked to', async () => {
    const payload = { tenant_id: tenant, sandbox_id: sandboxId(2) };
    // One attempt, so it fails at once (the catalog's 10 with backoff would take minutes).
    const first = await queues
      .queue('sandboxes')
      .add('sandbox.destroy', payload, { jobId: 'destroy-2', attempts: 1 });
    await expect(first.waitUntilFinished(events, 20_000)).rejects.toThrow(/refused/);
    const queue = queues.queue('sandboxes');
    expect(await queue.getJobState('destroy-2')).toBe('failed');
    const failedTs = (await queue.getJob('destroy-2'))!.timestamp;

    // Without the option BullMQ keeps the failed job and ignores the add.
    await queues.enqueue('sandbox.destroy', payload, { jobId: 'destroy-2' });
    expect(await queue.getJobState('destroy-2')).toBe('failed');

    await new Promise((r) => setTimeout(r, 5));
    const again = await queues.enqueue('sandbox.destroy', payload, {
      jobId: 'destroy-2',
      isRetryOfFinished: true,
    });
    expect(again.timestamp).toBeGreaterThan(failedTs);
    expect(['waiting', 'active', 'delayed', 'failed']).toContain(
      await queue.getJobState('destroy-2'),
    );
    expect((await queue.getJob('destroy-2'))!.timestamp).toBe(again.timestamp);
  });
});
