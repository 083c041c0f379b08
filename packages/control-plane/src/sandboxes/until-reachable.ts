import { setTimeout as sleep } from 'node:timers/promises';
import { isDependencyUnavailable } from '@cubicle/queue';

/** Backoff between tries while a dependency is away: short, so work resumes soon after it returns. */
const FIRST_WAIT_MS = 250;
const MAX_WAIT_MS = 1_000;

/**
 * untilReachable runs `step` again, with a short backoff, for as long as it fails because the
 * database or Redis cannot be reached, and until `signal` aborts (the job's timeout); any other
 * error, or the last one after the abort, is thrown. For steps that must not be lost once work
 * is done outside the database, such as recording a desktop that started.
 */
export async function untilReachable<T>(signal: AbortSignal, step: () => Promise<T>): Promise<T> {
  for (let wait = FIRST_WAIT_MS; ; wait = Math.min(wait * 2, MAX_WAIT_MS)) {
    try {
      return await step();
    } catch (err) {
      if (!isDependencyUnavailable(err) || signal.aborted) throw err;
    }
    await sleep(wait, undefined, { signal }).catch(() => undefined);
  }
}
