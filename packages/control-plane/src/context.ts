import type { Db } from '@cubicle/db';
import type { JobName, JobPayload } from '@cubicle/contract/jobs';

/** Enqueue is the one side effect services have besides the database (a JobQueues in production). */
export interface Enqueue {
  enqueue<N extends JobName>(name: N, payload: JobPayload<N>, options?: { jobId?: string; delayMs?: number }): Promise<unknown>;
}

/** Deps are what every service function receives; tenant scoping is an explicit argument. */
export interface Deps {
  db: Db;
  queues: Enqueue;
  /** Injected so tests can move time; production uses Date.now. */
  now?: () => Date;
}

export const nowOf = (deps: Deps): Date => (deps.now ? deps.now() : new Date());
