import { z } from 'zod';

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
});
export type GuestCallOutcome = z.infer<typeof GuestCallOutcome>;

/**
 * Job ids of guest calls are `<reply-to>.<n>`: the worker publishes the outcome on the channel of
 * the API process that waits for it, so replicas never see each other's results.
 */
export const guestCallJobId = (replyTo: string, n: number) => `${replyTo}.${n}`;

export function replyToOf(jobId: string): string | undefined {
  const dot = jobId.lastIndexOf('.');
  return dot > 0 ? jobId.slice(0, dot) : undefined;
}

/** Pub/sub channels are scoped by the BullMQ prefix, so installations sharing a Redis stay apart. */
export const guestResultChannel = (prefix: string, replyTo: string) =>
  `${prefix}:guest-results:${replyTo}`;

/** guestQueueName is the sandbox's BullMQ queue (the catalog's `guest-{sandbox_id}`). */
export const guestQueueName = (sandboxId: string) => `guest-${sandboxId}`;
