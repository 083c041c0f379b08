import { AppError } from '@cubicle/contract/errors';
import { dispatchJob, type DispatchableJob } from '@cubicle/queue';
import type { WorkerDeps } from '../resources.js';
import {
  guestResultChannel,
  outcomeMessage,
  replyToOf,
  sendOutcome,
  type GuestCallOutcome,
  type OutcomeReply,
  type ReplyOptions,
} from './guest-call-messages.js';
import type { Publisher } from '../context.js';
import { answerOf, runGuestCall, type GuestCallAnswer } from './run-guest-call.js';
import type { DriveTargetHooks } from './reach-drive-target.js';

/** A BullMQ job or a sandbox lane's job: both carry their enqueue time. */
type Job = DispatchableJob & { timestamp: number };

/**
 * answerLostGuestCall tells the caller of a call whose worker died mid-call (its lane's lease
 * ran out) that it will not be answered: 504 `timeout`, maybe delivered, as its own wait would
 * have said, only sooner. Calls are never run again. (For a job of another kind, such as a
 * secrets.sync, the message goes to a channel nobody listens on.)
 */
export async function answerLostGuestCall(
  options: { publisher: Publisher; prefix: string },
  jobId: string,
): Promise<void> {
  const replyTo = replyToOf(jobId);
  if (!replyTo) return;
  const outcome: GuestCallOutcome = {
    job_id: jobId,
    ...answerOf(
      new AppError(
        'timeout',
        'the worker running the call stopped; it may have been delivered: observe before retrying',
      ),
    ),
  };
  await options.publisher.publish(
    guestResultChannel(options.prefix, replyTo),
    outcomeMessage(outcome),
  );
}

/**
 * answerGuestCallJob is the processor of a sandbox's lane: it runs the call (payload
 * checked against the catalog, catalog timeout) and answers the API process that waits for it on
 * its channel (sendOutcome: published here, or by the lane as it frees the lane). Unexpected failures answer 500 so the caller is not left to
 * time out; `onError` gets the error for logging.
 */
export async function answerGuestCallJob(
  deps: WorkerDeps,
  options: ReplyOptions &
    DriveTargetHooks & {
      onError?: (err: unknown) => void;
    },
  job: Job,
): Promise<{ status: number; laneReply?: OutcomeReply }> {
  let answer: GuestCallAnswer;
  try {
    answer = (await dispatchJob(
      {
        'guest.call': (p, ctx) =>
          runGuestCall(deps, p, {
            enqueuedAt: job.timestamp,
            signal: ctx.signal,
            deliverSecrets: options.deliverSecrets,
            resumePaused: options.resumePaused,
          }),
      },
      job,
    )) as GuestCallAnswer;
  } catch (err) {
    options.onError?.(err);
    // The message stays in the worker's log; the caller learns only that it failed.
    answer = answerOf(new AppError('internal_error', 'internal error'));
  }
  if (!job.id) return { status: answer.status };
  const { firstConfirmedActionMs, timing, ...reply } = answer;
  return sendOutcome(options, {
    job_id: job.id,
    ...reply,
    ...(firstConfirmedActionMs === undefined
      ? {}
      : { first_confirmed_action_ms: firstConfirmedActionMs }),
    ...(timing === undefined ? {} : { timing }),
  });
}
