import { AppError, zodIssues } from '@cubicle/contract/errors';
import { ActionResult, GuestRoutes, type GuestOperation } from '@cubicle/contract/guest';
import type { JobPayload } from '@cubicle/contract/jobs';
import { newId } from '@cubicle/db';
import { nowOf } from '../context.js';
import { reachDriveTarget, type DriveTargetHooks } from './reach-drive-target.js';
import { guestClientOf, type GuestCallOperation } from '../guest/guest-client.js';
import { refuseDuringHandoff } from '../handoffs/handoff-guard.js';
import type { WorkerDeps } from '../resources.js';
import { GUEST_CALL_MIN_START_MS, guestCallBoundMs } from './guest-call-bounds.js';
import type { GuestCallTiming } from './guest-call-timing.js';
import { redactRequest } from './redact-request.js';
import { claimRedactor } from '../secrets/claim-redactor.js';
import { insertActionRecordRow } from '../repositories/action-records.js';
import { keepActionScreenshots } from '../usage/keep-action-screenshots.js';

export type GuestCallPayload = JobPayload<'guest.call'>;

/**
 * GuestCallAnswer is the status and body the caller gets, and, when this call was its claim's
 * first confirmed action, the claim's time to it (the API observes it in its metrics).
 */
export interface GuestCallAnswer {
  status: number;
  body: unknown;
  firstConfirmedActionMs?: number;
  /** Where the call's time went in the worker (a call that reached its guest and was answered). */
  timing?: GuestCallTiming;
}

export interface GuestCallRunOptions extends DriveTargetHooks {
  /** When the job was queued: the call's bound runs from here. */
  enqueuedAt: number;
  signal?: AbortSignal | undefined;
  now?: () => number;
}

/**
 * answerOf is the answer a failure becomes: an AppError's own status and envelope (the API
 * replaces the request id with its own when it rebuilds the error).
 */
export function answerOf(error: AppError): GuestCallAnswer {
  return { status: error.status, body: error.toEnvelope('worker') };
}

/**
 * runGuestCall performs one `guest.call` job: it checks the request against the contract, has
 * the guest client (guestClientFor: the sandbox still held by the caller's live claim, its token,
 * the peer-checked connection) forward it and check the answer against the same schema the
 * driver used, and stores every ActionResult with the claim. It never throws for expected
 * failures: every outcome is an answer the caller gets, an AppError's envelope for a failure. A job whose caller has already given up (its bound passed) is answered `timeout` without
 * being delivered — a late action is worse than none.
 */
export async function runGuestCall(
  deps: WorkerDeps,
  p: GuestCallPayload,
  opts: GuestCallRunOptions,
): Promise<GuestCallAnswer> {
  try {
    return await deliverGuestCall(deps, p, opts);
  } catch (err) {
    if (err instanceof AppError) return answerOf(err);
    throw err;
  }
}

async function deliverGuestCall(
  deps: WorkerDeps,
  p: GuestCallPayload,
  opts: GuestCallRunOptions,
): Promise<GuestCallAnswer> {
  const now = opts.now ?? (() => nowOf(deps).getTime());
  const taken = performance.now();
  const queued = now() - opts.enqueuedAt;
  const deadline = opts.enqueuedAt + guestCallBoundMs(p.operation, p.request);
  if (deadline - now() < GUEST_CALL_MIN_START_MS)
    throw new AppError(
      'timeout',
      'the call waited too long in the sandbox queue and was not delivered',
    );

  const route = GuestRoutes[p.operation as GuestOperation];
  // secrets.* carry values: only the worker's secrets.sync job calls them, never a guest.call.
  if (
    route.transport !== 'http' ||
    route.response === null ||
    !route.auth ||
    p.operation.startsWith('secrets.')
  )
    throw new AppError(
      'validation_failed',
      `operation ${p.operation} cannot be called through the API`,
    );
  const operation = p.operation as GuestCallOperation;
  const parsed = route.request
    ? route.request.safeParse(p.request)
    : { success: true as const, data: undefined };
  if (!parsed.success)
    throw new AppError('validation_failed', 'invalid body', {
      issues: zodIssues(parsed.error, 'body'),
    });

  // The sandbox, only while the caller's claim on it is live, and never a driving call while a
  // human holds the desktop (reachDriveTarget: one statement that also records the activity).
  const target = {
    tenantId: p.tenant_id,
    claimId: p.claim_id,
    sandboxId: p.sandbox_id,
    now: new Date(now()),
  };
  const live = await reachDriveTarget(deps, target, opts);
  refuseDuringHandoff(live.handoffId, p.operation);
  const guest = guestClientOf(deps.keyring, live);

  const started = now();
  const sentAt = performance.now();
  let answeredAt = sentAt;
  const answer = await guest.call(operation, parsed.data as never, {
    timeoutMs: Math.max(1, deadline - started),
    signal: opts.signal,
    onAnswered: () => (answeredAt = performance.now()),
  });
  const checkedAt = performance.now();
  const durationMs = now() - started;
  const hasSecrets = guest.guest.hasSecrets;
  // Claims holding secrets keep no screenshots: pixels cannot be redacted by value.
  if (!hasSecrets)
    await keepActionScreenshots(deps.db, p.tenant_id, p.claim_id, p.operation, answer);

  if (route.response === ActionResult) {
    const result = answer as ActionResult;
    // The claim's secret values never rest in an ActionRecord, typed or echoed: `[secret:NAME]`.
    const redactor = hasSecrets ? await claimRedactor(deps, p.tenant_id, p.claim_id) : undefined;
    const stored = <T>(value: T): T => (redactor ? redactor.redactDeep(value) : value);
    const firstMs = await insertActionRecordRow(deps.db, {
      id: newId('action_record'),
      tenantId: p.tenant_id,
      claimId: p.claim_id,
      sandboxId: p.sandbox_id,
      operation: p.operation,
      requestJson: JSON.stringify(stored(redactRequest(parsed.data ?? {}))),
      resultJson: JSON.stringify(stored(result)),
      effect: result.effect,
      durationMs: Math.round(durationMs),
    });
    if (firstMs !== null)
      return { status: 200, body: answer, firstConfirmedActionMs: firstMs, timing: timing() };
  }
  return { status: 200, body: answer, timing: timing() };

  function timing(): GuestCallTiming {
    const end = performance.now();
    return {
      queued,
      target: sentAt - taken,
      guest: answeredAt - sentAt,
      check: checkedAt - answeredAt,
      store: end - checkedAt,
      worker: end - taken,
    };
  }
}
