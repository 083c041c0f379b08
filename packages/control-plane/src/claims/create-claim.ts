import type { Claim as ClaimView, CreateClaimRequest } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { newId, ulid, type Claim, type Sandbox } from '@cubicle/db';
import { nowOf, nudgeReconcile } from '../context.js';
import type { Deps } from '../resources.js';
import {
  IDEMPOTENCY_TTL_MS,
  requestHash,
  type IdempotencyInput,
} from '../idempotency/idempotency.js';
import {
  decideClaim,
  type ClaimRequestItem,
  type SealedClaimSecret,
} from '../lifecycle/claim-batch.js';
import type { ClaimOutcome } from '../lifecycle/claim-outcome.js';
import { claimAnswerStatus } from '../lifecycle/claim-liveness.js';
import { toClaimView } from './claim-view.js';
import type { ClaimRow } from '../repositories/claims.js';
import { waitForClaim } from './wait-for-claim.js';
import { emitWebhookEvent } from '../webhooks/emit-webhook-event.js';
import { checkClaimEgress, storeClaimEgress } from '../egress/claim-egress.js';
import { publishEgressChange } from '../egress/egress-changes.js';
import { checkClaimRecording, startClaimRecording } from '../recordings/recording-settings.js';

export interface CreateClaimResult {
  claim: ClaimView;
  /** 201: active (new); 202: pending; 200: an existing live claim of that name (reconnect). */
  status: 200 | 201 | 202;
  /** This request took the claim (false: an idempotent replay or a reconnect by name). */
  fresh: boolean;
}

/**
 * createClaim hands out a sandbox of the pool. The claim statement (the lifecycle's decideClaim)
 * decides what becomes of the request and returns it as a ClaimOutcome; this maps each outcome
 * to its answer. From a warm sandbox it is one statement (201). Otherwise the claim is recorded
 * pending, the pool is asked to provision, and the call waits up to `wait_seconds` for the
 * worker to fulfil it (201) before answering 202 pending. A live claim with the same name comes
 * back as is (200). With an idempotency key, the key and the claim commit together, so a retry
 * returns the same claim even after an API restart; the same key with another body is 409.
 * `secrets`, sealed by the caller (createClaimWithSecrets), are written in the same statement.
 */
export async function createClaim(
  deps: Deps,
  tenantId: string,
  poolName: string,
  request: CreateClaimRequest,
  idempotency?: Omit<IdempotencyInput, 'body'>,
  secrets?: SealedClaimSecret[],
): Promise<CreateClaimResult> {
  const now = nowOf(deps);
  // A widening is refused before anything is taken.
  if (request.egress) await checkClaimEgress(deps, tenantId, poolName, request.egress);
  if (request.recording) await checkClaimRecording(deps, tenantId, poolName, request.recording);
  const item: ClaimRequestItem = {
    claimId: newId('claim'),
    tenantId,
    poolName,
    name: request.name ?? `c-${ulid(now.getTime())}`,
    named: request.name !== undefined,
    metadata: request.metadata,
    ttlSeconds: request.ttl_seconds ?? null,
    now,
    ...(secrets && secrets.length > 0 ? { secrets } : {}),
    ...(idempotency
      ? {
          idempotency: {
            rowId: newId('idempotency_key'),
            key: idempotency.key,
            scope: idempotency.scope,
            requestHash: requestHash(request, idempotency.hashKey),
            expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
          },
        }
      : {}),
  };
  const outcome = await decideClaim(deps, item);
  switch (outcome.kind) {
    case 'pool_not_found':
      throw new AppError('not_found', `pool ${poolName} not found`);
    case 'quota_exceeded':
      throw new AppError(
        'quota_exceeded',
        `the tenant's concurrent_claims quota (${outcome.limit}) is reached`,
        { quota: 'concurrent_claims', limit: outcome.limit, used: outcome.used },
      );
    case 'key_reused':
      throw new AppError(
        'idempotency_key_reused',
        'this Idempotency-Key was used with a different request body',
      );
    case 'key_in_progress':
      throw new AppError(
        'idempotency_in_progress',
        'a request with this Idempotency-Key is still being processed',
      );
    case 'refused':
      // A data exception (class 22) is this request's own input that Postgres cannot store; the
      // contract refuses such strings first, so this is a second line, not the usual path.
      if (outcome.code.startsWith('22'))
        throw new AppError('validation_failed', 'the claim cannot be stored', {
          issues: [
            {
              location: 'body',
              path: 'metadata',
              code: 'invalid_string',
              message: outcome.message,
            },
          ],
        });
      throw new Error(`the claim was refused (${outcome.code}): ${outcome.message}`);
    case 'replay':
      return { claim: viewOf(outcome, poolName), status: outcome.status, fresh: false };
    case 'reconnect':
      return { claim: viewOf(outcome, poolName), status: 200, fresh: false };
    case 'active':
    case 'pending':
      return answerNewClaim(deps, tenantId, poolName, request, outcome);
    default:
      return outcome satisfies never;
  }
}

function viewOf(outcome: { claim: Claim; sandbox?: Sandbox | null }, poolName: string): ClaimView {
  const row: ClaimRow = {
    ...outcome.claim,
    pool: { name: poolName },
    sandbox: outcome.sandbox ?? null,
  };
  return toClaimView(row);
}

async function answerNewClaim(
  deps: Deps,
  tenantId: string,
  poolName: string,
  request: CreateClaimRequest,
  outcome: Extract<ClaimOutcome, { kind: 'active' | 'pending' }>,
): Promise<CreateClaimResult> {
  const { poolId, claim } = outcome;
  // Stored before the answer, so the sandbox is narrowed before the caller can use it.
  if (request.egress)
    await storeClaimEgress(
      deps,
      claim.id,
      request.egress,
      outcome.kind === 'active' ? outcome.sandbox.id : null,
    );
  // Before the answer, so the worker's recording puller finds it as soon as the claim is active.
  // The pool's setting came back with the claim: a pool without recording costs no query here.
  await startClaimRecording(
    deps,
    tenantId,
    claim.id,
    poolId,
    request.recording,
    outcome.poolRecording,
  );
  // Refill after taking a warm sandbox; provision (or fulfil) for a pending claim. Not awaited:
  // the claim is committed, and a lost nudge only delays a refill by one sweep interval.
  void nudgeReconcile(deps, tenantId, poolId);
  if (outcome.kind === 'active') {
    // The claimed sandbox now serves the tenant: its egress point loads the credentials bound
    // for it (a warm sandbox has none). Not awaited; a point without this sandbox ignores it.
    // A sandbox provisioned without a link (its pool's policy was `none`) has no point to tell,
    // and never gets one later (LocalEgress): no message, no Redis write per claim.
    if (!request.egress && outcome.sandbox.egressLink !== false)
      void publishEgressChange(deps, { sandbox_id: outcome.sandbox.id });
    // Announced now (a pending claim is announced when fulfilled). Not awaited, and outside the
    // claim's statement: the hot path stays one round trip; the event is lost only if this
    // process dies in the next few milliseconds. The claim statement said whether the tenant
    // has a subscribed endpoint, so a tenant without one costs nothing more (no probe, no body).
    if (outcome.hasHooks)
      void emitWebhookEvent(deps, tenantId, 'claim.activated', {
        claim_id: claim.id,
        name: claim.name,
        pool: poolName,
        pool_id: poolId,
        sandbox_id: outcome.sandbox.id,
        metadata: claim.metadata as Record<string, string>,
      });
    return { claim: viewOf(outcome, poolName), status: 201, fresh: true };
  }
  if (request.wait_seconds > 0) {
    const settled = await waitForClaim(deps, claim.id, request.wait_seconds * 1000);
    return {
      claim: toClaimView(settled),
      status: claimAnswerStatus(settled.status),
      fresh: true,
    };
  }
  return { claim: viewOf(outcome, poolName), status: 202, fresh: true };
}
