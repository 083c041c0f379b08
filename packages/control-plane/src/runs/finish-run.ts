import type { Run, RunEndReason, RunStatus } from '@cubicle/contract/api';
import { sqlPoolOf } from '@cubicle/db';
import { appendRunEvents, publishRunEvents, type NewRunEvent } from './append-run-events.js';
import type { RunDeps } from './run-deps.js';
import { notifyRunFinished } from './run-finished.js';
import { RUN_COLUMNS, runView, type RunRow } from './run-view.js';

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
  const client = await sqlPoolOf(deps.db).connect();
  let row: RunRow | undefined;
  let events;
  try {
    await client.query('BEGIN');
    ({
      rows: [row],
    } = await client.query<RunRow>({
      name: `cubicle_finish_run_${guard}_v1`,
      text: `UPDATE runs SET status = $2::run_status, end_reason = $3, end_detail = $4,
               exit_code = $5, signal = $6, finished_at = clock_timestamp(),
               worker_id = NULL, lease_expires_at = NULL
             WHERE id = $1 AND status IN ('queued', 'running')
               ${guard === 'lease_expired' ? 'AND lease_expires_at < clock_timestamp()' : ''}
             RETURNING ${RUN_COLUMNS}`,
      values: [
        runId,
        outcome.status,
        outcome.reason,
        outcome.detail ?? null,
        outcome.exitCode ?? null,
        outcome.signal ?? null,
      ],
    }));
    if (!row) {
      await client.query('ROLLBACK');
      return null;
    }
    events = await appendRunEvents(client, runId, [
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
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
  const run = runView({ ...row, last_seq: events.at(-1)?.seq ?? row.last_seq });
  await publishRunEvents(deps, events);
  await notifyRunFinished(row.tenant_id, run);
  return run;
}
