import { ErrorCodes, type ErrorCodeName } from '@cubicle/contract/errors';
import {
  ActionResult,
  GuestErrorResponse,
  GuestRoutes,
  type GuestOperation,
} from '@cubicle/contract/guest';
import type { JobPayload } from '@cubicle/contract/jobs';
import { newId, sqlPoolOf } from '@cubicle/db';
import { open } from '../crypto/keyring.js';
import type { WorkerDeps } from '../sandboxes/provision-sandbox.js';
import { callGuest, GuestTimeoutError } from './call-guest.js';
import { GUEST_CALL_MIN_START_MS, guestCallBoundMs } from './guest-call-bounds.js';
import { redactRequest } from './redact-request.js';
import { claimRedactor } from '../secrets/claim-redactor.js';
import { keepActionScreenshots } from '../usage/keep-action-screenshots.js';

export type GuestCallPayload = JobPayload<'guest.call'>;

/** GuestCallAnswer is the status and body the caller gets. */
export interface GuestCallAnswer {
  status: number;
  body: unknown;
}

/** An error envelope made on the way (the API replaces request_id with its own). */
function failure(
  code: ErrorCodeName,
  message: string,
  details?: Record<string, unknown>,
): GuestCallAnswer {
  return {
    status: ErrorCodes[code].status,
    body: { error: { code, message, request_id: 'worker', ...(details ? { details } : {}) } },
  };
}

/**
 * runGuestCall performs one `guest.call` job: it checks that the sandbox is still claimed by the
 * caller's active claim, opens the guest token, forwards the request to the guest driver, checks
 * the answer against the same contract schema the driver used, and stores every ActionResult
 * with the claim. It never throws for expected failures: every outcome is an answer the caller
 * gets. A job whose caller has already given up (its bound passed) is answered `timeout` without
 * being delivered — a late action is worse than none.
 */
export async function runGuestCall(
  deps: WorkerDeps,
  p: GuestCallPayload,
  opts: { enqueuedAt: number; signal?: AbortSignal; now?: () => number },
): Promise<GuestCallAnswer> {
  const now = opts.now ?? Date.now;
  const deadline = opts.enqueuedAt + guestCallBoundMs(p.operation, p.request);
  if (deadline - now() < GUEST_CALL_MIN_START_MS)
    return failure(
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
    return failure(
      'validation_failed',
      `operation ${p.operation} cannot be called through the API`,
    );
  const parsed = route.request
    ? route.request.safeParse(p.request)
    : { success: true as const, data: undefined };
  if (!parsed.success)
    return failure('validation_failed', 'invalid body', {
      issues: parsed.error.issues.map((i) => ({
        location: 'body',
        path: i.path.map(String).join('.'),
        code: i.code,
        message: i.message,
      })),
    });

  // One query: the sandbox, only while the caller's claim on it is active and unexpired. Plain
  // node-postgres with a named statement: this runs before every guest call, and the ORM's
  // query planning would cost more than the round trip.
  const { rows } = await sqlPoolOf(deps.db).query<{
    guest_endpoint: string | null;
    guest_token_ciphertext: Buffer | null;
    has_secrets: boolean;
  }>({
    name: 'cubicle_guest_call_sandbox_v3',
    text: `SELECT s.guest_endpoint, s.guest_token_ciphertext,
                  EXISTS (SELECT 1 FROM claim_secrets cs WHERE cs.claim_id = c.id) AS has_secrets
           FROM sandboxes s JOIN claims c ON c.sandbox_id = s.id
           WHERE s.id = $1 AND s.tenant_id = $2 AND s.state = 'claimed'
             AND c.id = $3 AND cubicle_claim_is_live(c.status, c.expires_at, $4)`,
    values: [p.sandbox_id, p.tenant_id, p.claim_id, new Date(now())],
  });
  const found = rows[0];
  const sandbox = found && {
    guestEndpoint: found.guest_endpoint,
    guestTokenCiphertext: found.guest_token_ciphertext,
  };
  if (!sandbox) return failure('claim_not_active', 'the claim is no longer active');
  if (!sandbox.guestEndpoint || !sandbox.guestTokenCiphertext)
    return failure('backend_unavailable', 'the sandbox has no guest driver endpoint');
  const token = open(deps.keyring, sandbox.guestTokenCiphertext, p.sandbox_id);

  const started = now();
  let answer;
  try {
    answer = await callGuest({
      endpoint: sandbox.guestEndpoint,
      token,
      method: route.method,
      path: route.path,
      body: parsed.data,
      timeoutMs: Math.max(1, deadline - started),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
  } catch (err) {
    if (err instanceof GuestTimeoutError)
      return failure(
        'timeout',
        'the guest did not answer in time; the call may have been delivered: observe before retrying',
      );
    return failure('backend_unavailable', 'the guest driver could not be reached');
  }
  const durationMs = now() - started;

  if (answer.status !== 200) {
    const envelope = GuestErrorResponse.safeParse(answer.body);
    if (!envelope.success)
      return failure(
        'backend_unavailable',
        `the guest driver answered ${answer.status} without an error envelope`,
      );
    return { status: ErrorCodes[envelope.data.error.code].status, body: envelope.data };
  }
  const checked = route.response.safeParse(answer.body);
  // A guest answer outside the contract is never passed on: the caller could act on a lie.
  if (!checked.success)
    return failure('backend_unavailable', 'the guest driver answered outside the contract');
  // Claims holding secrets keep no screenshots: pixels cannot be redacted by value.
  if (!found.has_secrets)
    await keepActionScreenshots(deps.db, p.tenant_id, p.claim_id, p.operation, checked.data);

  if (route.response === ActionResult) {
    const result = checked.data as ActionResult;
    // The claim's secret values never rest in an ActionRecord, typed or echoed: `[secret:NAME]`.
    const redactor = found.has_secrets
      ? await claimRedactor(deps, p.tenant_id, p.claim_id)
      : undefined;
    const stored = <T>(value: T): T => (redactor ? redactor.redactDeep(value) : value);
    await sqlPoolOf(deps.db).query({
      name: 'cubicle_insert_action_record_v1',
      text: `INSERT INTO action_records (id, tenant_id, claim_id, sandbox_id, operation, request,
               result, effect, duration_ms, created_at)
             VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8, $9, now())`,
      values: [
        newId('action_record'),
        p.tenant_id,
        p.claim_id,
        p.sandbox_id,
        p.operation,
        JSON.stringify(stored(redactRequest(parsed.data ?? {}))),
        JSON.stringify(stored(result)),
        result.effect,
        Math.round(durationMs),
      ],
    });
  }
  return { status: 200, body: checked.data };
}
