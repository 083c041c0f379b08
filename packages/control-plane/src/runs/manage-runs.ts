import { AppError } from '@cubicle/contract/errors';
import {
  isFinalRunStatus,
  type Run,
  type RunEventPage,
  type RunStdinRequest,
} from '@cubicle/contract/api';
import { sqlOf } from '@cubicle/db';
import { assertNoActiveHandoff } from '../handoffs/handoff-guard.js';
import { pageById } from '../page-by-id.js';
import { finishRun } from './finish-run.js';
import {
  RUN_INPUT_TTL_SECONDS,
  runControlChannel,
  runInputKey,
  type RunInput,
} from './run-channels.js';
import type { RunDeps } from '../resources.js';
import { selectRunEvents } from '../repositories/runs-events.js';
import type { RunRow } from '../repositories/runs-rows.js';
import { requestRunCancel, selectClaimRuns, selectRun } from '../repositories/runs.js';
import { runEventView, runView } from './run-view.js';

/** findRun answers the tenant's run row, or 404 (also for another tenant's run). */
export async function findRun(deps: RunDeps, tenantId: string, runId: string): Promise<RunRow> {
  const row = await sqlOf(deps.db).row(selectRun, runId, tenantId);
  if (!row) throw new AppError('not_found', 'no such run');
  return row;
}

export async function getRun(deps: RunDeps, tenantId: string, runId: string): Promise<Run> {
  return runView(await findRun(deps, tenantId, runId));
}

/** listClaimRuns pages a claim's runs, newest first (404 for an unknown claim). */
export async function listClaimRuns(
  deps: RunDeps,
  tenantId: string,
  claimId: string,
  query: { limit: number; cursor?: string | undefined },
) {
  const claim = await deps.db.claim.count({ where: { id: claimId, tenantId } });
  if (claim === 0) throw new AppError('not_found', 'no such claim');
  const rows = await sqlOf(deps.db).rows(
    selectClaimRuns,
    claimId,
    tenantId,
    query.cursor ?? null,
    query.limit + 1,
  );
  return pageById(rows, query.limit, runView);
}

/** readRunEvents reads events after `afterSeq`, in seq order, without a tenant check. */
export async function readRunEvents(
  deps: Pick<RunDeps, 'db'>,
  runId: string,
  afterSeq: number,
  limit: number,
) {
  const rows = await sqlOf(deps.db).rows(selectRunEvents, runId, afterSeq, limit);
  return rows.map(runEventView);
}

/**
 * listRunEvents is one page of a run's events after `after_seq`. `complete` says the run has
 * ended and this page reaches its last event, so a poller knows when to stop.
 */
export async function listRunEvents(
  deps: RunDeps,
  tenantId: string,
  runId: string,
  query: { after_seq: number; limit: number },
): Promise<RunEventPage> {
  // Status first: events read after a final status include the last one.
  const run = await findRun(deps, tenantId, runId);
  const data = await readRunEvents(deps, runId, query.after_seq, query.limit);
  const next = data.at(-1)?.seq ?? query.after_seq;
  return {
    data,
    next_after_seq: next,
    complete: isFinalRunStatus(run.status) && next >= run.last_seq,
  };
}

/**
 * sendRunInput queues input for the worker holding the run's stream: appended to the run's list
 * (order kept across API replicas), then a nudge on the control channel. The worker drains the
 * list when it starts the run and on every nudge, so input sent before the run started arrives.
 */
async function sendRunInput(deps: RunDeps, runId: string, input: RunInput) {
  const key = runInputKey(deps.prefix, runId);
  await deps.redis.rpush(key, JSON.stringify(input));
  await deps.redis.expire(key, RUN_INPUT_TTL_SECONDS);
  await deps.redis.publish(runControlChannel(deps.prefix), runId);
}

/**
 * writeRunStdin queues input for a live run; an ended run is 409 `conflict`, and input while a
 * human holds the claim's desktop is 409 `handoff_active`.
 */
export async function writeRunStdin(
  deps: RunDeps,
  tenantId: string,
  runId: string,
  body: RunStdinRequest,
): Promise<Run> {
  const row = await findRun(deps, tenantId, runId);
  if (isFinalRunStatus(row.status))
    throw new AppError('conflict', `the run has ended (${row.status})`);
  await assertNoActiveHandoff(deps.db, row.claim_id);
  if (body.encoding === 'base64' && !/^[A-Za-z0-9+/]*={0,2}$/.test(body.data))
    throw new AppError('validation_failed', 'data is not base64');
  if (body.data !== '')
    await sendRunInput(deps, runId, { type: 'stdin', data: body.data, encoding: body.encoding });
  if (body.eof) await sendRunInput(deps, runId, { type: 'stdin_end' });
  return runView(row);
}

/**
 * cancelRun ends a run: a queued one at once (it never starts), a running one by SIGINT to its
 * process group and SIGKILL after the grace period (the worker sends them; the run ends
 * `cancelled` when its process is gone). The request is recorded first, so a worker that picks
 * the run up later, or re-reads it, honours it. Cancelling an ended run changes nothing.
 */
export async function cancelRun(
  deps: RunDeps,
  tenantId: string,
  runId: string,
  graceSeconds: number,
): Promise<Run> {
  const row = await sqlOf(deps.db).row(requestRunCancel, runId, tenantId, graceSeconds * 1000);
  if (!row) return getRun(deps, tenantId, runId);
  if (row.status === 'queued' && row.worker_id === null) {
    const ended = await finishRun(deps, runId, { status: 'cancelled', reason: 'cancelled' });
    if (ended) return ended;
  }
  await sendRunInput(deps, runId, { type: 'cancel', grace_ms: graceSeconds * 1000 });
  return getRun(deps, tenantId, runId);
}
