import type { ReleaseReason } from '@cubicle/contract/api';
import type { Prisma } from '@cubicle/db';
import { moveSandboxes } from './sandbox-transitions.js';

export interface EndedClaim {
  poolId: string;
  sandboxId: string | null;
}

/**
 * endClaim moves a live claim (pending or active) to released with its reason, and its sandbox,
 * if it had one, to releasing: it is destroyed, never handed to another claim. Null when the
 * claim was already released (or is not the tenant's): releasing is idempotent. Call it inside
 * the transaction that also records what the end causes (tickets revoked, the webhook event).
 *
 * The tenant's row is locked first, as the claim batch locks it before inserting: the trigger
 * that counts live claims (cubicle_count_live_claims) updates that row, and taking it before the
 * claim row keeps one lock order, so a release and a claim of the same name never deadlock.
 */
export async function endClaim(
  tx: Prisma.TransactionClient,
  end: { tenantId: string; claimId: string; reason: ReleaseReason; now: Date },
): Promise<EndedClaim | null> {
  await tx.$queryRaw`SELECT 1 FROM tenants WHERE id = ${end.tenantId} FOR NO KEY UPDATE`;
  const rows = await tx.$queryRaw<{ sandbox_id: string | null; pool_id: string }[]>`
    UPDATE claims SET status = 'released', released_at = ${end.now},
                      release_reason = ${end.reason}::release_reason, updated_at = ${end.now}
    WHERE id = ${end.claimId} AND tenant_id = ${end.tenantId} AND status IN ('pending', 'active')
    RETURNING sandbox_id, pool_id`;
  const row = rows[0];
  if (!row) return null;
  if (row.sandbox_id)
    await moveSandboxes(tx, {
      ids: row.sandbox_id,
      from: ['claimed', 'warm', 'provisioning'],
      to: 'releasing',
      reason: 'claim_released',
    });
  return { poolId: row.pool_id, sandboxId: row.sandbox_id };
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
  const rows = await tx.$queryRaw<{ claim_id: string; tenant_id: string; sandbox_id: string }[]>`
    SELECT claim_id, tenant_id, sandbox_id FROM cubicle_fulfil_pending(${poolId}, ${now}::timestamptz, ${limit}::int)`;
  return rows.map((r) => ({ claimId: r.claim_id, tenantId: r.tenant_id, sandboxId: r.sandbox_id }));
}
