import { AppError } from '@cubicle/contract/errors';
import { dispatchJob, type DispatchableJob } from '@cubicle/queue';
import type { WorkerDeps } from '../resources.js';
import { guestResultChannel, replyToOf, type GuestCallOutcome } from './guest-call-messages.js';
import type { Publisher } from '../context.js';
import { answerOf, runGuestCall, type GuestCallAnswer } from './run-guest-call.js';

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
    JSON.stringify(outcome),
  );
}

/**
 * answerGuestCallJob is the processor of a sandbox's lane: it runs the call (payload
 * checked against the catalog, catalog timeout) and publishes the answer on the channel of the
 * API process that waits for it. Unexpected failures answer 500 so the caller is not left to
 * time out; `onError` gets the error for logging.
 */
export async function answerGuestCallJob(
  deps: WorkerDeps,
  options: { publisher: Publisher; prefix: string; onError?: (err: unknown) => void },
  job: Job,
): Promise<{ status: number }> {
  let answer: GuestCallAnswer;
  try {
    answer = (await dispatchJob(
      {
        'guest.call': (p, ctx) =>
          runGuestCall(deps, p, { enqueuedAt: job.timestamp, signal: ctx.signal }),
      },
      job,
    )) as GuestCallAnswer;
  } catch (err) {
    options.onError?.(err);
    // The message stays in the worker's log; the caller learns only that it failed.
    answer = answerOf(new AppError('internal_error', 'internal error'));
  }
  const replyTo = job.id ? replyToOf(job.id) : undefined;
  if (replyTo) {
    const { firstConfirmedActionMs, ...reply } = answer;
    const outcome: GuestCallOutcome = {
      job_id: job.id!,
      ...reply,
      ...(firstConfirmedActionMs === undefined
        ? {}
        : { first_confirmed_action_ms: firstConfirmedActionMs }),
    };
    await options.publisher.publish(
      guestResultChannel(options.prefix, replyTo),
      JSON.stringify(outcome),
    );
  }
  return { status: answer.status };
}
