import type { ReleaseReason } from '@cubicle/contract/api';
import { sqlOf, type Db } from '@cubicle/db';
import { claimsDueToEnd as claimsDueToEndStatement } from './state-statements.js';

/** A claim whose deadline has passed, with the reason it ends for and when it became due. */
export interface DueClaim {
  id: string;
  tenantId: string;
  reason: Extract<ReleaseReason, 'max_lifetime' | 'ttl_expired' | 'idle_timeout'>;
  dueAt: Date;
}

/**
 * claimsDueToEnd lists up to `limit` live claims whose deadline has passed at `now`, oldest TTL
 * first, each with the first rule it broke: the hard maximum lifetime, then the TTL, then the
 * heartbeat window (which only an active claim has: a pending one is not idle, it waits).
 * The rules are the lifecycle's; reclaimClaims ends what this lists.
 */
export async function claimsDueToEnd(db: Db, now: Date, limit: number): Promise<DueClaim[]> {
  const rows = await sqlOf(db).rows(claimsDueToEndStatement, now, limit);
  return rows.map((r) => ({ id: r.id, tenantId: r.tenant_id, reason: r.reason, dueAt: r.due_at }));
}
