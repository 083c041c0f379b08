import type { RunEvent } from '@cubicle/contract/api';
import { defineDevice, type Resources } from '../resources.js';
import {
  appendRunEventBatches,
  eventBytes,
  publishRunEvents,
  type NewRunEvent,
  type RunAppend,
} from './append-run-events.js';

interface Waiting extends RunAppend {
  resolve: (events: RunEvent[]) => void;
  reject: (err: unknown) => void;
}

/** One statement carries at most this many runs' batches (a bound on its locks)… */
const MAX_RUNS_PER_COMMIT = 64;
/** …and, past its first batch, at most this much output (a bound on its size). */
const MAX_COMMIT_BYTES = 4 * 1024 * 1024;

const bytesOf = (events: NewRunEvent[]) => events.reduce((n, e) => n + eventBytes(e), 0);

/** The run-event committer of one control plane, on its database and Redis. */
const runEventCommitter = defineDevice('run-event committer', (resources) =>
  createCommitter(resources),
);

/**
 * commitRunEvents stores one run's batch and publishes it, together with whatever other runs of
 * this control plane have ready: batches that arrive while a commit is in flight go in the next
 * one, as one statement, one commit and one Redis write for all of them. Per message, not per
 * event, is where a busy event path spends (with 16 chatty runs, the worker's profile was led by
 * its socket writes to Postgres and Redis, one pair per run's commit). One commit is in flight at
 * a time per control plane (the devices of its Resources), so a run's batches (one at a time
 * from its RunEventLog) keep their order, and each is published only once durable. When the
 * database refuses a statement, its batches are tried one by one, so only a batch that fails
 * alone fails (its log retries it); nothing of a failed statement was stored, so nothing of it is
 * announced.
 */
export function commitRunEvents(
  deps: Pick<Resources, 'devices'>,
  runId: string,
  events: NewRunEvent[],
): Promise<RunEvent[]> {
  const submit = deps.devices.of(runEventCommitter);
  return new Promise((resolve, reject) => submit({ runId, events, resolve, reject }));
}

function createCommitter(deps: Pick<Resources, 'db' | 'redis' | 'prefix'>) {
  let queue: Waiting[] = [];
  let busy = false;

  async function flush() {
    busy = true;
    try {
      while (queue.length > 0) {
        let bytes = 0;
        let count = 0;
        while (count < Math.min(queue.length, MAX_RUNS_PER_COMMIT)) {
          bytes += bytesOf(queue[count]!.events);
          if (count > 0 && bytes > MAX_COMMIT_BYTES) break;
          count++;
        }
        const batch = queue.slice(0, count);
        queue = queue.slice(count);
        await commit(batch).catch(async (err: unknown) => {
          // One batch the database refuses must not fail its neighbours: each goes alone.
          if (batch.length === 1) return batch[0]!.reject(err);
          for (const w of batch) await commit([w]).catch((one: unknown) => w.reject(one));
        });
      }
    } finally {
      busy = false;
    }
  }

  async function commit(batch: Waiting[]) {
    const stored = await appendRunEventBatches(deps.db, batch);
    await publishRunEvents(deps, ...stored);
    batch.forEach((w, i) => w.resolve(stored[i]!));
  }

  return (waiting: Waiting) => {
    // A run has at most one batch waiting (its log commits one at a time), so a batch never
    // meets another of its own run in a statement.
    queue.push(waiting);
    if (!busy) void flush();
  };
}
