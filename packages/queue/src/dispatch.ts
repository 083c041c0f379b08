import { Jobs, JobNames, type JobName, type JobPayload } from '@cubicle/contract/jobs';
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';

export interface JobContext {
  job: Job;
  /** Aborted when the catalog timeout passes; handlers pass it to their I/O. */
  signal: AbortSignal;
}

export type JobHandler<N extends JobName> = (
  payload: JobPayload<N>,
  ctx: JobContext,
) => Promise<unknown>;
export type JobHandlers = { [N in JobName]?: JobHandler<N> };

export class JobTimeoutError extends Error {
  constructor(name: string, ms: number) {
    super(`job ${name} exceeded its ${ms} ms timeout`);
    this.name = 'JobTimeoutError';
  }
}

/**
 * dispatchJob is the processor every worker runs: an unknown job name or a payload that fails
 * its schema is an UnrecoverableError (retrying cannot fix it); the handler runs under the
 * catalog's timeout.
 */
export async function dispatchJob(handlers: JobHandlers, job: Job): Promise<unknown> {
  if (!(JobNames as string[]).includes(job.name))
    throw new UnrecoverableError(`unknown job ${job.name}`);
  const name = job.name as JobName;
  const handler = handlers[name] as JobHandler<JobName> | undefined;
  if (!handler) throw new UnrecoverableError(`no handler for ${name} in this worker`);
  const parsed = Jobs[name].payload.safeParse(job.data);
  if (!parsed.success) {
    throw new UnrecoverableError(
      `invalid payload for ${name}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  }
  const timeoutMs = Jobs[name].timeout_ms;
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new JobTimeoutError(name, timeoutMs));
    }, timeoutMs);
  });
  try {
    return await Promise.race([
      handler(parsed.data as JobPayload<JobName>, { job, signal: controller.signal }),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export interface StartWorkersOptions {
  connection: Redis;
  prefix?: string;
  queues: string[];
  handlers: JobHandlers;
  concurrency?: number;
  /** Per-queue concurrency overriding `concurrency` (e.g. fewer desktop starts at once). */
  concurrencyByQueue?: Record<string, number>;
}

/** startWorkers runs one BullMQ Worker per queue name with the shared dispatcher. */
export function startWorkers(options: StartWorkersOptions): Worker[] {
  return options.queues.map(
    (queue) =>
      new Worker(queue, (job) => dispatchJob(options.handlers, job), {
        connection: options.connection,
        prefix: options.prefix ?? 'cubicle',
        concurrency: options.concurrencyByQueue?.[queue] ?? options.concurrency ?? 8,
        // A killed worker's jobs come back within ~15 s (lock expiry + stall check) rather than
        // BullMQ's 30-60 s defaults; locks are renewed at half the duration while a job runs.
        lockDuration: 10_000,
        stalledInterval: 5_000,
        maxStalledCount: 2,
      }),
  );
}
