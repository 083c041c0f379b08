import { dispatchJob } from '@cubicle/queue';
import type { WorkerDeps } from '../sandboxes/provision-sandbox.js';
import {
  guestResultChannel,
  replyToOf,
  type GuestCallOutcome,
  type Publisher,
} from './guest-call-messages.js';
import { runGuestCall, type GuestCallAnswer } from './run-guest-call.js';

type Job = Parameters<typeof dispatchJob>[1];

const internalError: GuestCallAnswer = {
  status: 500,
  body: { error: { code: 'internal_error', message: 'internal error', request_id: 'worker' } },
};

/**
 * answerGuestCallJob is the processor of a `guest-<sandbox>` queue: it runs the call (payload
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
    answer = internalError;
  }
  const replyTo = job.id ? replyToOf(job.id) : undefined;
  if (replyTo) {
    const outcome: GuestCallOutcome = { job_id: job.id!, ...answer };
    await options.publisher.publish(
      guestResultChannel(options.prefix, replyTo),
      JSON.stringify(outcome),
    );
  }
  return { status: answer.status };
}
