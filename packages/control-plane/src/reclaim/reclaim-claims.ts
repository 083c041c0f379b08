import type { ReleaseReason } from '@cubicle/contract/api';
import { nowOf } from '../context.js';
import type { Deps } from '../resources.js';
import { releaseClaim } from '../claims/manage-claims.js';
import { claimsDueToEnd } from '../lifecycle/claim-deadlines.js';

const RELEASE_PARALLELISM = 8;

export interface ReclaimedClaim {
  id: string;
  tenantId: string;
  reason: ReleaseReason;
  /** When the claim became due, for reclaim-latency metrics. */
  dueAt: Date;
}

/**
 * reclaimClaims releases every claim whose deadline has passed (claimsDueToEnd: the hard
 * maximum first, then the TTL, then the heartbeat window). State lives in the database, so any
 * worker (or a restarted one) picks up exactly where another stopped; releaseClaim is
 * idempotent, so two workers sweeping at once release each claim once.
 */
export async function reclaimClaims(deps: Deps, limit = 500): Promise<ReclaimedClaim[]> {
  const due = await claimsDueToEnd(deps.db, nowOf(deps), limit);
  // A few releases at a time: one slow release must not hold back the rest of the batch.
  const released: ReclaimedClaim[] = [];
  for (let i = 0; i < due.length; i += RELEASE_PARALLELISM) {
    await Promise.all(
      due.slice(i, i + RELEASE_PARALLELISM).map(async (claim) => {
        await releaseClaim(deps, claim.tenantId, claim.id, claim.reason);
        released.push(claim);
      }),
    );
  }
  return released;
}
