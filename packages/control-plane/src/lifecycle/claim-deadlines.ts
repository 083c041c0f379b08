import type { ReleaseReason } from '@cubicle/contract/api';
import type { Db } from '@cubicle/db';

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
  const rows = await db.$queryRaw<
    { id: string; tenant_id: string; reason: DueClaim['reason']; due_at: Date }[]
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
  return rows.map((r) => ({ id: r.id, tenantId: r.tenant_id, reason: r.reason, dueAt: r.due_at }));
}
