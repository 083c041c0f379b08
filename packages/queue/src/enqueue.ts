import {
  Jobs,
  parseJobPayload,
  queueFor,
  type JobName,
  type JobPayload,
} from '@cubicle/contract/jobs';
import { randomBytes } from 'node:crypto';
import { Queue, type Job, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { SandboxLanes, type LaneJob } from './lanes/sandbox-lanes.js';

/**
 * Jobs whose catalog queue is per sandbox (`{sandbox_id}`): they go to that sandbox's lane. The
 * catalog's queue names are plain strings to TypeScript, so the list is written out; a unit test
 * holds it equal to the catalog.
 */
export type LaneJobName = 'guest.call' | 'secrets.sync' | 'claim.pause';

/** isLaneJob tells whether a job runs on its sandbox's lane rather than on a BullMQ queue. */
export const isLaneJob = (name: JobName): name is LaneJobName =>
  Jobs[name].queue.includes('{sandbox_id}');

export interface EnqueueOptions {
  /** A stable id makes enqueueing idempotent: BullMQ keeps one job per id. */
  jobId?: string;
  delayMs?: number;
  /**
   * Debounce: enqueues with the same id collapse into one job that runs `ttlMs` after the last of
   * them (BullMQ deduplication with extend + replace). For nudges such as "reconcile this pool",
   * where one run after a burst serves every caller of the burst.
   */
  dedupe?: { id: string; ttlMs: number };
  /**
   * With `jobId`: a finished (failed or completed) job of that id is removed first, so the new
   * one runs. BullMQ keeps finished jobs (failed ones for 7 days) and ignores an add with their
   * id; a sweep that re-enqueues outstanding work would otherwise be a no-op for that long.
   */
  isRetryOfFinished?: boolean;
}

/**
 * JobQueues enqueues catalog jobs: the payload is validated here (a bad payload is a bug in the
 * caller and throws), and attempts/backoff come from the catalog, never from call sites. Jobs
 * of a per-sandbox queue (`guest-{sandbox_id}`) go to that sandbox's lane (SandboxLanes), the
 * others to their BullMQ queue.
 */
export class JobQueues {
  private readonly queues = new Map<string, Queue>();
  private isClosed = false;
  readonly lanes: SandboxLanes;

  constructor(
    private readonly connection: Redis,
    private readonly prefix: string = 'cubicle',
  ) {
    this.lanes = new SandboxLanes(connection, prefix);
  }

  queue(name: string): Queue {
    // A timer that fires after shutdown (a debounced reconcile nudge) must not open a BullMQ
    // connection on the closed Redis client: it would log ConnectionClosedError from inside
    // BullMQ, out of the caller's reach.
    if (this.isClosed) throw new Error(`queue ${name}: the job queues are closed`);
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue(name, { connection: this.connection, prefix: this.prefix });
      this.queues.set(name, queue);
    }
    return queue;
  }

  async enqueue<N extends JobName>(
    name: N,
    payload: JobPayload<N>,
    options: EnqueueOptions = {},
  ): Promise<N extends LaneJobName ? LaneJob : Job> {
    const data = parseJobPayload(name, payload);
    const spec = Jobs[name];
    if (isLaneJob(name)) return (await this.pushToLane(name, data, options)) as never;
    const jobOptions: JobsOptions = {
      attempts: spec.attempts,
      removeOnComplete: { age: 3600, count: 10_000 },
      removeOnFail: { age: 7 * 86_400 },
      ...(spec.backoff
        ? { backoff: { type: spec.backoff.type, delay: spec.backoff.delay_ms } }
        : {}),
      ...(options.jobId ? { jobId: options.jobId } : {}),
      ...(options.delayMs ? { delay: options.delayMs } : {}),
      ...(options.dedupe
        ? {
            delay: options.dedupe.ttlMs,
            deduplication: {
              id: options.dedupe.id,
              ttl: options.dedupe.ttlMs,
              extend: true,
              replace: true,
            },
          }
        : {}),
    };
    const queue = this.queue(queueFor(name, data));
    if (options.jobId && options.isRetryOfFinished) {
      const state = await queue.getJobState(options.jobId);
      if (state === 'failed' || state === 'completed') {
        // Removing can race another remover or a retry; whatever happens, add decides.
        await queue.remove(options.jobId).catch(() => 0);
      }
    }
    return (await queue.add(name, data, jobOptions)) as never;
  }

  /** pushToLane appends a per-sandbox job to its sandbox's lane; lanes keep order, not delays. */
  private async pushToLane(name: LaneJobName, data: unknown, options: EnqueueOptions) {
    if (options.delayMs || options.dedupe || options.isRetryOfFinished)
      throw new Error(`${name} runs on its sandbox's lane, which has no delays or deduplication`);
    const spec = Jobs[name];
    const job: LaneJob = {
      id: options.jobId ?? `${name}.${randomBytes(8).toString('hex')}`,
      name,
      data,
      timestamp: Date.now(),
      attempts: spec.attempts,
      backoffMs: spec.backoff?.delay_ms ?? 0,
    };
    await this.lanes.push((data as { sandbox_id: string }).sandbox_id, job);
    return job;
  }

  /**
   * schedule makes `name` run every `everyMs` (a BullMQ job scheduler: one schedule in Redis
   * however many workers call this, and only one run at a time per queue slot).
   */
  async schedule<N extends JobName>(
    name: N,
    payload: JobPayload<N>,
    everyMs: number,
  ): Promise<void> {
    const data = parseJobPayload(name, payload);
    await this.queue(queueFor(name, data)).upsertJobScheduler(
      `every-${name}`,
      { every: everyMs },
      {
        name,
        data,
        opts: { removeOnComplete: { count: 100 }, removeOnFail: { count: 1000 } },
      },
    );
  }

  async close(): Promise<void> {
    this.isClosed = true;
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    this.queues.clear();
  }
}
