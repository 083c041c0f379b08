// Persistent profiles (issue 34): the two statements the profiles system needs beyond Prisma's
// model calls — a race-free first use, and the retention sweep's due list.
import { sqlOf, statement, type SqlTarget } from '@cubicle/db';

/**
 * A first use creates the profile; two first uses at once both end with the one row (Prisma's
 * upsert is a read then a write, which two callers can both pass).
 */
const insertProfile = statement<never, [id: string, tenantId: string, name: string]>(
  'cubicle_profile_insert_v1',
  `INSERT INTO profiles (id, tenant_id, name) VALUES ($1, $2, $3)
   ON CONFLICT (tenant_id, name) DO NOTHING`,
);

export function insertProfileIfAbsent(sql: SqlTarget, id: string, tenantId: string, name: string) {
  return sqlOf(sql).exec(insertProfile, id, tenantId, name);
}

/** Profiles no claim holds, last used longer ago than their tenant's profile_retention_days. */
const dueProfiles = statement<{ id: string; tenant_id: string }, [now: Date, limit: number]>(
  'cubicle_profiles_due_v1',
  `SELECT p.id, p.tenant_id FROM profiles p JOIN tenants t ON t.id = p.tenant_id
   WHERE p.live_claim_id IS NULL
     AND p.last_used_at < $1::timestamptz - make_interval(days => t.profile_retention_days)
   ORDER BY p.last_used_at LIMIT $2`,
);

export function profilesDueForRetention(sql: SqlTarget, now: Date, limit: number) {
  return sqlOf(sql).rows(dueProfiles, now, limit);
}
