import { Jobs } from '@cubicle/contract/jobs';
import type { GuestOperation } from '@cubicle/contract/guest';

/** Time a call may spend besides its own wait: queueing, the hop to the guest, storing the result. */
export const GUEST_CALL_MARGIN_MS = 5_000;
/** Operations without a wait of their own (a screenshot, a click) get this long in all. */
export const GUEST_CALL_DEFAULT_MS = 30_000;
/** A worker never starts a call with less than this left: the caller would have given up before it ends. */
export const GUEST_CALL_MIN_START_MS = 250;
/**
 * The API waits this much past a call's bound, so the worker's own answer (even its `timeout`)
 * wins the race against the API's 504.
 */
export const GUEST_CALL_ANSWER_SLACK_MS = GUEST_CALL_MARGIN_MS / 5;
/**
 * The longest an API request waiting for a guest call stays open without a byte on the wire:
 * the catalog's cap on every bound plus the API's slack. The HTTP server's idle and request
 * timeouts derive from it (apps/api/src/app.ts), so no call is cut before its answer or its 504.
 */
export const GUEST_CALL_MAX_WAIT_MS = Jobs['guest.call'].timeout_ms + GUEST_CALL_ANSWER_SLACK_MS;

/**
 * guestCallBoundMs is how long, from enqueueing, a caller waits for a guest call: the request's
 * own wait (`timeout_ms`, `wait_for_window_ms`) plus a margin, capped by the job's catalog
 * timeout. The API waits this long and the worker refuses to start a job past it, so a call the
 * caller already gave up on (504) is never delivered later.
 */
export function guestCallBoundMs(
  operation: GuestOperation,
  request: Record<string, unknown>,
): number {
  const own = ownWaitMs(operation, request);
  const bound = own === undefined ? GUEST_CALL_DEFAULT_MS : own + GUEST_CALL_MARGIN_MS;
  return Math.min(Math.max(bound, GUEST_CALL_DEFAULT_MS), Jobs['guest.call'].timeout_ms);
}

/** guestCallWaitMs is how long the API waits for a call's answer before it answers 504 `timeout`. */
export function guestCallWaitMs(
  operation: GuestOperation,
  request: Record<string, unknown>,
): number {
  return guestCallBoundMs(operation, request) + GUEST_CALL_ANSWER_SLACK_MS;
}

function ownWaitMs(
  operation: GuestOperation,
  request: Record<string, unknown>,
): number | undefined {
  const pick = (key: string) =>
    typeof request[key] === 'number' ? (request[key] as number) : undefined;
  switch (operation) {
    case 'shell.run':
      return pick('timeout_ms');
    case 'windows.launch':
      return pick('wait_for_window_ms');
    case 'windows.close':
    case 'verify_state':
      return pick('timeout_ms');
    default:
      return undefined;
  }
}
