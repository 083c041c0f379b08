import { Jobs, JobNames, type JobName, type JobPayload } from '@cubicle/contract/jobs';
import { DelayedError, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { isDependencyUnavailable } from './dependency-errors.js';

/** What dispatchJob needs of a job: a BullMQ Job or a sandbox lane's job. */
export interface DispatchableJob {
  id?: string | undefined;
  name: string;
  data: unknown;
}

export interface JobContext {
  job: DispatchableJob;
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
export async function dispatchJob(handlers: JobHandlers, job: DispatchableJob): Promise<unknown> {
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
  /** How a job waits for an unreachable dependency; DEPENDENCY_WAIT by default. */
  dependencyWait?: DependencyWait;
  /** Told each time a job is put back to wait for a dependency (for logs). */
  onDependencyWait?: (job: Job, err: unknown, delayMs: number) => void;
}

/**
 * How a job that hit an unreachable dependency (Postgres, Redis) waits: it is put back as
 * delayed without spending one of its attempts, with a backoff from `initialMs` doubling up to
 * `maxMs`, until `giveUpAfterMs` after it was enqueued; then its error counts as a failure.
 */
export interface DependencyWait {
  initialMs: number;
  maxMs: number;
  giveUpAfterMs: number;
}

/** Short steps so work resumes within ~2 s of the dependency's return. */
export const DEPENDENCY_WAIT: DependencyWait = {
  initialMs: 250,
  maxMs: 2_000,
  giveUpAfterMs: 30 * 60_000,
};

/**
 * dependencyWaitMs is the delay before the next run of a job that has waited `waits` times
 * already (0 for the first time), or undefined when it has waited long enough.
 */
export function dependencyWaitMs(
  wait: DependencyWait,
  waits: number,
  enqueuedAt: number,
  now: number,
): number | undefined {
  if (now - enqueuedAt >= wait.giveUpAfterMs) return undefined;
  return Math.min(wait.initialMs * 2 ** Math.min(waits, 20), wait.maxMs);
}

/**
 * runJob dispatches one job; when the handler of a retryable job (attempts > 1) fails because a
 * dependency is unreachable, the job goes back to the delayed set without spending an attempt
 * (BullMQ `moveToDelayed` skips the attempt count) and runs again after a backoff. Only the
 * work's own failures use attempts.
 */
export async function runJob(
  handlers: JobHandlers,
  job: Job,
  token: string | undefined,
  options: Pick<StartWorkersOptions, 'dependencyWait' | 'onDependencyWait'> = {},
): Promise<unknown> {
  try {
    return await dispatchJob(handlers, job);
  } catch (err) {
    if (!token || err instanceof UnrecoverableError || !isDependencyUnavailable(err)) throw err;
    // A job the catalog never retries (a run, a guest call: replaying may repeat an action) is
    // not run again for this either.
    if ((job.opts.attempts ?? 1) <= 1) throw err;
    // Runs started minus attempts spent: how many times this job already waited (+1, this run).
    const waits = Math.max(0, (job.attemptsStarted ?? 1) - (job.attemptsMade ?? 0) - 1);
    const delayMs = dependencyWaitMs(
      options.dependencyWait ?? DEPENDENCY_WAIT,
      waits,
      job.timestamp,
      Date.now(),
    );
    if (delayMs === undefined) throw err;
    await job.moveToDelayed(Date.now() + delayMs, token);
    options.onDependencyWait?.(job, err, delayMs);
    throw new DelayedError();
  }
}

/** startWorkers runs one BullMQ Worker per queue name with the shared dispatcher. */
export function startWorkers(options: StartWorkersOptions): Worker[] {
  return options.queues.map(
    (queue) =>
      new Worker(queue, (job, token) => runJob(options.handlers, job, token, options), {
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
