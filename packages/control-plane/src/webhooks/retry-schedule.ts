import type { WebhookRetryPolicy } from '../resources.js';

export type { WebhookRetryPolicy };

export const DEFAULT_RETRY_POLICY: WebhookRetryPolicy = {
  baseMs: 10_000,
  windowMs: 24 * 3600_000,
  maxGapMs: 2 * 3600_000,
};

/**
 * nextAttemptAt says when attempt `attemptsMade + 1` is due after a failed attempt, or null
 * when it would fall outside the retry window (the delivery then fails for good). Gaps double
 * from `baseMs` (base, 2·base, 4·base…, capped at `maxGapMs`) with up to 10 % jitter so
 * endpoints that failed together are not retried in lockstep.
 */
export function nextAttemptAt(
  policy: WebhookRetryPolicy,
  attemptsMade: number,
  createdAt: Date,
  now: Date,
  random: () => number = Math.random,
): Date | null {
  const exponent = Math.min(Math.max(attemptsMade - 1, 0), 40);
  const gap = Math.min(policy.baseMs * 2 ** exponent, policy.maxGapMs);
  const at = now.getTime() + Math.round(gap * (1 + 0.1 * random()));
  return at > createdAt.getTime() + policy.windowMs ? null : new Date(at);
}
