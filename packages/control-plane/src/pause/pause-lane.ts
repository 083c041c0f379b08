import { AppError } from '@cubicle/contract/errors';
import { dispatchJob, type DispatchableJob } from '@cubicle/queue';
import { nowOf } from '../context.js';
import {
  sendOutcome,
  type OutcomeReply,
  type ReplyOptions,
} from '../guest-calls/guest-call-messages.js';
import { answerOf } from '../guest-calls/run-guest-call.js';
import { touchClaimActivity } from '../repositories/claim-pauses.js';
import type { WorkerDeps } from '../resources.js';
import {
  resumePausedClaim,
  setClaimPaused,
  type PauseOutcome,
  type ResumeReason,
} from './set-claim-paused.js';

/**
 * answerPauseJob runs a `claim.pause` job of a sandbox's lane (pause, resume, or the auto-pause
 * sweep's idle_pause) and answers the API process waiting for it as a guest call's answer goes
 * (sendOutcome); the sweep's jobs have no one waiting (no reply channel).
 */
export async function answerPauseJob(
  deps: WorkerDeps,
  options: ReplyOptions & { onError?: (err: unknown) => void },
  job: DispatchableJob,
): Promise<{ status: number; laneReply?: OutcomeReply }> {
  let answer: { status: number; body: unknown };
  try {
    const outcome = (await dispatchJob(
      { 'claim.pause': (p) => setClaimPaused(deps, p, p.reason ?? 'api') },
      job,
    )) as PauseOutcome;
    answer = { status: 200, body: outcome };
  } catch (err) {
    if (err instanceof AppError) answer = answerOf(err);
    else {
      options.onError?.(err);
      answer = answerOf(new AppError('internal_error', 'internal error'));
    }
  }
  if (!job.id) return { status: answer.status };
  return sendOutcome(options, { job_id: job.id, ...answer });
}

/**
 * resumeForActivity is the one hook every way of driving a claim passes through before it
 * reaches the desktop: the sandbox lane's secrets deliveries, run starts and viewer connections
 * (a guest call does the same in its own lookup: reachDriveTarget). One statement records the activity (auto-pause's idle clock, at most
 * once a second) and says whether the claim is paused; a paused claim is resumed before the
 * caller goes on, so the call is answered as if it had never been paused. A claim that is gone
 * is left to the caller's own liveness check.
 */
export async function resumeForActivity(
  deps: WorkerDeps,
  target: { tenantId: string; claimId: string; sandboxId: string },
  reason: Exclude<ResumeReason, 'api'>,
): Promise<void> {
  if (!(await touchClaimActivity(deps.db, target.claimId, nowOf(deps)))) return;
  await resumePausedClaim(deps, target, reason);
}
