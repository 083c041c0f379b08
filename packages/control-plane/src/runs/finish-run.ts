import type { Run, RunEndReason, RunStatus } from '@cubicle/contract/api';
import { sqlOf } from '@cubicle/db';
import { inPgTransaction } from '../repositories/pg-transaction.js';
import { finishRunStatements } from '../repositories/runs.js';
import { appendRunEvents, publishRunEvents, type NewRunEvent } from './append-run-events.js';
import type { RunDeps } from '../resources.js';
import { notifyRunFinished } from './run-finished.js';
import { runView } from './run-view.js';

/** RunOutcome is how a run ended. */
export interface RunOutcome {
  status: Extract<RunStatus, 'succeeded' | 'failed' | 'cancelled'>;
  reason: RunEndReason;
  detail?: string | null;
  exitCode?: number | null;
  signal?: string | null;
}

/**
 * finishRun records a run's end once: the final status and reason, then `before` (e.g. the exit
 * event) and a final `status` event, in one transaction, so a reader that sees the final status
 * has every event. A run that already ended is left alone (null): whoever ended it first — the
 * worker, a cancel of a queued run, the lost-worker sweep — wins. Then the events are published
 * and the run-finished listeners called.
 */
export async function finishRun(
  deps: RunDeps,
  runId: string,
  outcome: RunOutcome,
  before: NewRunEvent[] = [],
  /** `lease_expired`: only if the holding worker's lease has lapsed (the lost-worker sweep). */
  guard: 'none' | 'lease_expired' = 'none',
): Promise<Run | null> {
  const ended = await inPgTransaction(deps.db, async (client, rollback) => {
    const row = await sqlOf(client).row(
      finishRunStatements[guard],
      runId,
      outcome.status,
      outcome.reason,
      outcome.detail ?? null,
      outcome.exitCode ?? null,
      outcome.signal ?? null,
    );
    if (!row) {
      rollback();
      return null;
    }
    const events = await appendRunEvents(client, runId, [
      ...before,
      {
        type: 'status',
        data: {
          status: outcome.status,
          reason: outcome.reason,
          ...(outcome.detail ? { detail: outcome.detail } : {}),
        },
      },
    ]);
    return { row, events };
  });
  if (!ended) return null;
  const { row, events } = ended;
  const run = runView({ ...row, last_seq: events.at(-1)?.seq ?? row.last_seq });
  await publishRunEvents(deps, events);
  await notifyRunFinished(row.tenant_id, run);
  return run;
}
