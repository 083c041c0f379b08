import { z } from 'zod';
import type { Publisher } from '../context.js';
import { GuestCallTiming } from './guest-call-timing.js';

/**
 * GuestCallOutcome is what the worker publishes when a guest call ends: the HTTP status and body
 * the caller gets (a guest answer, or an error envelope for failures on the way).
 */
export const GuestCallOutcome = z.object({
  job_id: z.string(),
  status: z.int().min(200).max(599),
  body: z.unknown(),
  /** Set when this call was its claim's first `confirmed` action: the claim's time to it. */
  first_confirmed_action_ms: z.number().min(0).optional(),
  /** Where the call's time went in the worker (GuestCallTiming); the API answers it as Server-Timing. */
  timing: GuestCallTiming.optional(),
});
export type GuestCallOutcome = z.infer<typeof GuestCallOutcome>;

const OutcomeHead = GuestCallOutcome.omit({ body: true });
/** An outcome as the API reads it: the body still as its JSON text when it came last (`v: 2`). */
export type ReceivedOutcome = z.infer<typeof OutcomeHead> &
  ({ bodyText: string; body?: never } | { body: unknown; bodyText?: never });

/** What starts a message whose body is its last member, as the JSON text of the guest's answer. */
const BODY_LAST = '{"v":2,';
const BODY_KEY = ',"body":';

/**
 * outcomeMessage writes an outcome as JSON with `body` last and a leading `"v":2`, so the API
 * can hand a big body (an observe, a screenshot) on as the text it is, without parsing and
 * writing it again (readOutcomeMessage). It is plain JSON: a reader that parses it whole (an API
 * of the version before) gets the same outcome.
 */
export function outcomeMessage(outcome: GuestCallOutcome): string {
  const { body, ...head } = outcome;
  const headText = JSON.stringify({ v: 2, ...head });
  const bodyText = JSON.stringify(body);
  return bodyText === undefined ? headText : `${headText.slice(0, -1)}${BODY_KEY}${bodyText}}`;
}

/**
 * readOutcomeMessage reads what outcomeMessage wrote, the body left as its text: the first
 * `,"body":` of such a message is the body's key, as a `"` inside a JSON string is always
 * escaped. Any other message (a worker of the version before) is parsed whole. Undefined when it
 * is no outcome.
 */
export function readOutcomeMessage(message: string): ReceivedOutcome | undefined {
  try {
    if (message.startsWith(BODY_LAST)) {
      const at = message.indexOf(BODY_KEY);
      if (at < 0) return OutcomeHead.parse(JSON.parse(message)) as ReceivedOutcome;
      const head = OutcomeHead.parse(JSON.parse(`${message.slice(0, at)}}`));
      return { ...head, bodyText: message.slice(at + BODY_KEY.length, -1) };
    }
    const whole = GuestCallOutcome.parse(JSON.parse(message));
    return { ...whole, body: whole.body };
  } catch {
    return undefined;
  }
}

/**
 * Job ids of guest calls are `<reply-to>.<n>`: the worker publishes the outcome on the channel of
 * the API process that waits for it, so replicas never see each other's results.
 */
export const guestCallJobId = (replyTo: string, n: number) => `${replyTo}.${n}`;

export function replyToOf(jobId: string): string | undefined {
  const dot = jobId.lastIndexOf('.');
  return dot > 0 ? jobId.slice(0, dot) : undefined;
}

/** The message answering a lane job's caller, and the channel it goes to. */
export interface OutcomeReply {
  channel: string;
  message: string;
}

/** outcomeReplyOf answers `outcome` to its job's caller; undefined when no caller waits (no reply-to). */
export function outcomeReplyOf(
  prefix: string,
  outcome: GuestCallOutcome,
): OutcomeReply | undefined {
  const replyTo = replyToOf(outcome.job_id);
  if (!replyTo) return undefined;
  return { channel: guestResultChannel(prefix, replyTo), message: outcomeMessage(outcome) };
}

/**
 * How a lane job's outcome reaches its caller: published here, or (`isReplyViaLane`) returned as
 * the job's `laneReply`, which the lane dispatcher publishes in the script that frees the lane.
 */
export interface ReplyOptions {
  publisher: Publisher;
  prefix: string;
  isReplyViaLane?: boolean | undefined;
}

/** sendOutcome answers a lane job's caller as `options` say; the job's result for the dispatcher. */
export async function sendOutcome(
  options: ReplyOptions,
  outcome: GuestCallOutcome,
): Promise<{ status: number; laneReply?: OutcomeReply }> {
  const reply = outcomeReplyOf(options.prefix, outcome);
  if (!reply) return { status: outcome.status };
  if (options.isReplyViaLane) return { status: outcome.status, laneReply: reply };
  await options.publisher.publish(reply.channel, reply.message);
  return { status: outcome.status };
}

/** Pub/sub channels are scoped by the BullMQ prefix, so installations sharing a Redis stay apart. */
export const guestResultChannel = (prefix: string, replyTo: string) =>
  `${prefix}:guest-results:${replyTo}`;

/** guestQueueName is the sandbox's BullMQ queue (the catalog's `guest-{sandbox_id}`). */
export const guestQueueName = (sandboxId: string) => `guest-${sandboxId}`;
