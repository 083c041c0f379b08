import { QueueEvents, type Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestRedisNamespace } from '../../../test/harness/index.js';
import { createQueueConnection, JobQueues, startWorkers } from '../src/index.js';

const tenant = 'ten_01h00000000000000000000000';
const sandbox = 'sbx_01h00000000000000000000001';

describe('job queues on real Redis', () => {
  let ns: ReturnType<typeof createTestRedisNamespace>;
  let conn: Redis;
  let queues: JobQueues;
  let workers: Worker[] = [];
  let events: QueueEvents;
  const seen: string[] = [];

  beforeAll(async () => {
    ns = createTestRedisNamespace();
    conn = createQueueConnection(ns.url);
    queues = new JobQueues(conn, ns.bullPrefix);
    workers = startWorkers({
      connection: createQueueConnection(ns.url),
      prefix: ns.bullPrefix,
      queues: ['sandboxes'],
      handlers: {
        'sandbox.provision': async (payload) => {
          seen.push(payload.sandbox_id);
          return { ok: true };
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

  it('runs a valid job through its handler', async () => {
    const job = await queues.enqueue('sandbox.provision', {
      tenant_id: tenant,
      sandbox_id: sandbox,
    });
    expect(job.opts.attempts).toBe(3);
    expect(await job.waitUntilFinished(events, 10_000)).toEqual({ ok: true });
    expect(seen).toContain(sandbox);
  });

  it('refuses to enqueue a bad payload', async () => {
    await expect(
      queues.enqueue('sandbox.provision', { tenant_id: tenant, sandbox_id: 'nope' } as never),
    ).rejects.toThrow();
  });

  it('fails a job with a bad payload once, without retries (UnrecoverableError)', async () => {
    const job = await queues
      .queue('sandboxes')
      .add('sandbox.provision', { sandbox_id: 'bad' }, { attempts: 5 });
    await expect(job.waitUntilFinished(events, 10_000)).rejects.toThrow(/invalid payload/);
    const after = await queues.queue('sandboxes').getJob(job.id!);
    expect(after?.attemptsMade).toBe(1);
  });

  it('fails a job that has no handler in this worker without retrying', async () => {
    const job = await queues.enqueue('sandbox.destroy', { tenant_id: tenant, sandbox_id: sandbox });
    await expect(job.waitUntilFinished(events, 10_000)).rejects.toThrow(/no handler/);
    expect((await queues.queue('sandboxes').getJob(job.id!))?.attemptsMade).toBe(1);
  });

  it("keeps its keys under the namespace prefix, none under BullMQ's default", async () => {
    // The Redis server is shared with other test files, each under its own prefix.
    expect((await conn.keys(`${ns.prefix}*`)).length).toBeGreaterThan(0);
    expect(await conn.keys('bull:*')).toEqual([]);
  });
});
