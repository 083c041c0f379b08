import type { ReleaseReason } from '@cubicle/contract/api';
import { nowOf, type Deps } from '../context.js';
import { releaseClaim } from '../claims/manage-claims.js';

const RELEASE_PARALLELISM = 8;

export interface ReclaimedClaim {
  id: string;
  tenantId: string;
  reason: ReleaseReason;
  /** When the claim became due, for reclaim-latency metrics. */
  dueAt: Date;
}

/**
 * reclaimClaims releases every claim whose deadline has passed: the hard maximum first, then
 * the TTL, then the heartbeat window. State lives in the database, so any worker (or a
 * restarted one) picks up exactly where another stopped; releaseClaim is idempotent, so two
 * workers sweeping at once release each claim once.
 */
export async function reclaimClaims(deps: Deps, limit = 500): Promise<ReclaimedClaim[]> {
  const now = nowOf(deps);
  const due = await deps.db.$queryRaw<
    { id: string; tenant_id: string; reason: ReleaseReason; due_at: Date }[]
  >`
    SELECT id, tenant_id,
      CASE
        WHEN max_expires_at <= ${now} THEN 'max_lifetime'
        WHEN expires_at <= ${now} THEN 'ttl_expired'
        ELSE 'idle_timeout'
      END AS reason,
      LEAST(max_expires_at, expires_at,
            COALESCE(last_heartbeat_at + make_interval(secs => idle_timeout_seconds), 'infinity'::timestamptz)) AS due_at
    FROM claims
    WHERE status <> 'released' AND (
      expires_at <= ${now} OR max_expires_at <= ${now} OR
      (status = 'active' AND idle_timeout_seconds IS NOT NULL
        AND last_heartbeat_at + make_interval(secs => idle_timeout_seconds) <= ${now})
    )
    ORDER BY expires_at
    LIMIT ${limit}`;
  // A few releases at a time: one slow release must not hold back the rest of the batch.
  const released: ReclaimedClaim[] = [];
  for (let i = 0; i < due.length; i += RELEASE_PARALLELISM) {
    await Promise.all(
      due.slice(i, i + RELEASE_PARALLELISM).map(async (claim) => {
        await releaseClaim(deps, claim.tenant_id, claim.id, claim.reason);
        released.push({
          id: claim.id,
          tenantId: claim.tenant_id,
          reason: claim.reason,
          dueAt: claim.due_at,
        });
      }),
    );
  }
  return released;
}
