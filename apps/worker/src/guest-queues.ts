import {
  answerGuestCallJob,
  redactRequest,
  syncClaimSecrets,
  guestAttachChannel,
  guestQueueName,
  type WorkerDeps,
} from '@cubicle/control-plane';
import { Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { dispatchJob } from '@cubicle/queue';

export interface GuestQueuesOptions {
  /** Shared by the per-sandbox Workers (BullMQ duplicates it for their blocking reads) and used to publish. */
  connection: Redis;
  /** A connection of its own, put in subscriber mode for attach requests. */
  subscriber: Redis;
  prefix: string;
  log: Logger;
  /** The safety net: claimed sandboxes are looked up this often even without attach requests. */
  scanIntervalMs?: number;
  /** Called for each Worker created (metrics listeners). */
  instrument?: (worker: Worker) => void;
}

/**
 * GuestQueues runs one BullMQ Worker per claimed sandbox's `guest-<id>` queue, with concurrency
 * 1 here and a global concurrency of 1 on the queue, so however many worker processes serve it,
 * a sandbox's calls run one at a time in order while different sandboxes run in parallel. A
 * queue is served from the API's attach request (before a sandbox's first call) or the periodic
 * scan of claimed sandboxes (a restarted worker, a missed message), and closed once its sandbox
 * is no longer claimed.
 */
export class GuestQueues {
  private readonly workers = new Map<string, Worker>();
  private timer: NodeJS.Timeout | undefined;
  private scanning: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly deps: WorkerDeps,
    private readonly options: GuestQueuesOptions,
  ) {}

  async start(): Promise<void> {
    const channel = guestAttachChannel(this.options.prefix);
    this.options.subscriber.on('message', (ch, sandboxId) => {
      if (ch === channel) void this.attach(sandboxId);
    });
    await this.options.subscriber.subscribe(channel);
    await this.scan();
    this.timer = setInterval(() => void this.scan(), this.options.scanIntervalMs ?? 2_000);
    this.timer.unref();
  }

  /** attach serves a sandbox's queue if the database says it is claimed (the message is only a hint). */
  async attach(sandboxId: string): Promise<void> {
    if (this.closed || this.workers.has(sandboxId) || !/^sbx_[0-9a-z]{26}$/.test(sandboxId)) return;
    const claimed = await this.deps.db.sandbox.count({
      where: { id: sandboxId, state: 'claimed' },
    });
    if (claimed > 0) await this.serve(sandboxId);
  }

  /** scan serves every claimed sandbox and closes the queues of the others; runs are never concurrent. */
  scan(): Promise<void> {
    this.scanning ??= (async () => {
      try {
        const rows = await this.deps.db.sandbox.findMany({
          where: { state: 'claimed' },
          select: { id: true },
        });
        const claimed = new Set(rows.map((r) => r.id));
        for (const id of claimed) await this.serve(id);
        for (const id of [...this.workers.keys()]) if (!claimed.has(id)) await this.retire(id);
      } catch (err) {
        this.options.log.warn({ err: (err as Error).message }, 'guest queue scan failed');
      } finally {
        this.scanning = undefined;
      }
    })();
    return this.scanning;
  }

  private async serve(sandboxId: string): Promise<void> {
    if (this.closed || this.workers.has(sandboxId)) return;
    const name = guestQueueName(sandboxId);
    const { connection, prefix } = this.options;
    const worker = new Worker(name, (job) => this.process(job), {
      connection,
      prefix,
      concurrency: 1,
      autorun: false,
      // A call is never run twice: a job whose worker died mid-call fails instead of being
      // handed to another worker (its caller gets 504 and must observe before retrying).
      maxStalledCount: 0,
      lockDuration: 10_000,
      stalledInterval: 5_000,
    });
    this.workers.set(sandboxId, worker);
    worker.on('error', (err) =>
      this.options.log.warn({ queue: name, err: err.message }, 'guest queue error'),
    );
    this.options.instrument?.(worker);
    const queue = new Queue(name, { connection, prefix });
    try {
      await queue.setGlobalConcurrency(1);
    } finally {
      await queue.close();
    }
    void worker.run();
    void this.mirrorClaim(sandboxId);
  }

  /**
   * mirrorClaim tells the sandbox's backend it is claimed (Kubernetes flips its state label).
   * Advisory only: the database decides who holds a sandbox, so a failure is just logged.
   */
  private async mirrorClaim(sandboxId: string): Promise<void> {
    try {
      const row = await this.deps.db.sandbox.findUnique({
        where: { id: sandboxId },
        select: { backend: true },
      });
      await (row && this.deps.backends[row.backend])?.markClaimed?.(sandboxId);
    } catch (err) {
      this.options.log.warn({ sandboxId, err: (err as Error).message }, 'claim not mirrored');
    }
  }

  /**
   * retire stops serving a sandbox that is no longer claimed and deletes its queue from Redis:
   * its finished jobs hold requests (typed text, file contents) that should not outlive it.
   */
  private async retire(sandboxId: string): Promise<void> {
    await this.stop(sandboxId);
    const queue = new Queue(guestQueueName(sandboxId), {
      connection: this.options.connection,
      prefix: this.options.prefix,
    });
    try {
      await queue.obliterate({ force: true });
    } catch (err) {
      this.options.log.warn({ sandboxId, err: (err as Error).message }, 'guest queue not deleted');
    } finally {
      await queue.close();
    }
  }

  private async stop(sandboxId: string): Promise<void> {
    const worker = this.workers.get(sandboxId);
    if (!worker) return;
    this.workers.delete(sandboxId);
    await worker.close();
  }

  /**
   * process runs one job of the sandbox's queue: a guest call (its answer is published to the API
   * process waiting for it) or a secrets delivery (queued here so later calls see the files).
   */
  private async process(job: Job): Promise<unknown> {
    if (job.name === 'secrets.sync')
      return dispatchJob({ 'secrets.sync': (p) => syncClaimSecrets(this.deps, p) }, job);
    try {
      return await answerGuestCallJob(
        this.deps,
        {
          publisher: this.options.connection,
          prefix: this.options.prefix,
          onError: (err) =>
            this.options.log.error(
              { jobId: job.id, err: (err as Error).message },
              'guest call failed',
            ),
        },
        job,
      );
    } finally {
      await this.forgetTypedValues(job);
    }
  }

  /**
   * forgetTypedValues rewrites a finished call's job data with what it typed, set or wrote
   * replaced (redactRequest): BullMQ keeps finished jobs in Redis for a while, and a typed
   * password must not rest there. Calls with nothing to hide cost no extra round trip.
   */
  private async forgetTypedValues(job: Job): Promise<void> {
    const data = job.data as { request?: unknown };
    const redacted = redactRequest(data.request);
    if (JSON.stringify(redacted) === JSON.stringify(data.request)) return;
    await job
      .updateData({ ...data, request: redacted })
      .catch((err: Error) =>
        this.options.log.warn({ jobId: job.id, err: err.message }, 'job data not redacted'),
      );
  }

  /** The sandboxes whose queues this process serves. */
  get served(): string[] {
    return [...this.workers.keys()];
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.scanning;
    await Promise.all([...this.workers.keys()].map((id) => this.stop(id)));
  }
}
