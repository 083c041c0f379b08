import type { ReleaseReason } from '@cubicle/contract/api';
import { newId, sqlOf, type Db, type Prisma } from '@cubicle/db';
import { claimRowOf, type ClaimRow } from '../repositories/claims.js';
import { endClaim as endClaimStatement, fulfilPending } from './state-statements.js';
import { MAX_WEBHOOKS_PER_TENANT } from '../webhooks/emit-webhook-event.js';

export interface EndedClaim {
  /** This call ended the claim; false when it had ended before (releasing is idempotent). */
  ended: boolean;
  /** The claim as it is now, with its pool's name and its sandbox, for the view. */
  row: ClaimRow;
}

/**
 * endClaim moves a live claim (pending or active) to released with its reason, and its sandbox,
 * if it had one, to releasing: it is destroyed, never handed to another claim. The claim's viewer
 * tickets are revoked and its `claim.ended` webhook deliveries written in the same statement
 * (cubicle_end_claim, packages/db/sql/functions): one round trip and one commit, where the ORM's
 * interactive transaction took eight statements and a read back. Null when the tenant has no
 * such claim.
 */
export async function endClaim(
  db: Db,
  end: { tenantId: string; claimId: string; reason: ReleaseReason; now: Date },
): Promise<EndedClaim | null> {
  const row = await sqlOf(db).row(
    endClaimStatement,
    end.tenantId,
    end.claimId,
    end.reason,
    end.now,
    Array.from({ length: MAX_WEBHOOKS_PER_TENANT }, () => newId('webhook_delivery')),
    newId('webhook_event'),
  );
  if (!row) return null;
  return { ended: row.ended, row: claimRowOf(row) };
}

export interface ActivatedClaim {
  claimId: string;
  tenantId: string;
  sandboxId: string;
}

/**
 * activatePendingClaims gives warm sandboxes to up to `limit` of the pool's pending claims,
 * oldest first, by the rules a new claim follows (cubicle_fulfil_pending: the same warm pick and
 * deadline functions as cubicle_claim_batch). Returns the claims it activated, so the caller
 * records their events in the same transaction.
 */
export async function activatePendingClaims(
  tx: Prisma.TransactionClient,
  poolId: string,
  now: Date,
  limit: number,
): Promise<ActivatedClaim[]> {
  const rows = await sqlOf(tx).rows(fulfilPending, poolId, now, limit);
  return rows.map((r) => ({ claimId: r.claim_id, tenantId: r.tenant_id, sandboxId: r.sandbox_id }));
}
