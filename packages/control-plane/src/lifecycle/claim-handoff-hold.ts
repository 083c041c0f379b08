import { AppError } from '@cubicle/contract/errors';
import { sqlOf, type SqlTarget } from '@cubicle/db';
import { isClaimLive, whyClaimIsNotLive } from './claim-liveness.js';
import {
  holdClaimDeadline,
  lockClaimForHandoff,
  restoreClaimDeadline,
} from './state-statements.js';

/** What a handoff request needs of its claim, read under the claim's row lock. */
export interface HandoffClaim {
  sandboxId: string;
  expiresAt: Date;
  maxExpiresAt: Date;
}

/**
 * lockLiveClaimForHandoff locks the tenant's claim for a handoff request (inside the caller's
 * transaction) and answers it when a handoff may start: 404 for a claim the tenant does not
 * have, 409 `claim_not_active` for one that is not live (isClaimLive at `now`), 409
 * `handoff_active` when a handoff is already active (its id in the details).
 */
export async function lockLiveClaimForHandoff(
  tx: SqlTarget,
  tenantId: string,
  claimId: string,
  now: Date,
): Promise<HandoffClaim> {
  const row = await sqlOf(tx).row(lockClaimForHandoff, claimId, tenantId);
  if (!row) throw new AppError('not_found', `claim ${claimId} not found`);
  const claim = { status: row.status, expiresAt: row.expires_at };
  if (!isClaimLive(claim, now) || !row.sandbox_id)
    throw new AppError('claim_not_active', `the claim is ${whyClaimIsNotLive(claim)}`);
  if (row.active_handoff_id)
    throw new AppError('handoff_active', 'a human already holds this desktop', {
      handoff_id: row.active_handoff_id,
    });
  return { sandboxId: row.sandbox_id, expiresAt: row.expires_at, maxExpiresAt: row.max_expires_at };
}

/**
 * holdClaimForHandoff keeps a claim alive while a human holds it: its TTL deadline is at least
 * `until` (the handoff's lease), never past the hard maximum, and its heartbeat window restarts.
 * The reclaim sweep also skips the TTL and idle rules while the handoff is active
 * (claimsDueToEnd); this keeps the claim live for the calls that judge it (isClaimLive).
 */
export async function holdClaimForHandoff(
  tx: SqlTarget,
  claimId: string,
  until: Date,
  now: Date,
): Promise<void> {
  await sqlOf(tx).exec(holdClaimDeadline, claimId, until, now);
}

/**
 * restoreClaimAfterHandoff gives the claim the TTL it had left when its agent asked, from `now`
 * (capped at the hard maximum), and a fresh heartbeat window. A released claim is left alone.
 */
export async function restoreClaimAfterHandoff(
  tx: SqlTarget,
  claimId: string,
  ttlLeftMs: number,
  now: Date,
): Promise<void> {
  await sqlOf(tx).exec(restoreClaimDeadline, claimId, ttlLeftMs, now);
}
