import { sqlOf, statement } from '@cubicle/db';
import { isActivityDue } from './claim-pauses.js';
import { liveGuestSelect, type LiveGuestRow } from './claims.js';
import type { PoolTarget } from './pool-target.js';

/** A claim with its sandbox's guest (as liveGuestRow reads it) and whether it is paused now. */
export interface DriveTargetRow extends LiveGuestRow {
  paused: boolean;
}

// One statement, one round trip before every driving call of a lane: it records the call as the
// claim's activity (auto-pause's idle clock, at most once a second per claim, and always while
// paused: the touch statement of claim-pauses.ts) and reads what liveGuestRow reads, plus the
// pause. The data-modifying CTE runs whatever the outer SELECT reads; the SELECT sees the row as
// it was before it, which the touch does not change in any column read here.
const driveTarget = statement<DriveTargetRow, [claimId: string, tenantId: string, now: Date]>(
  'cubicle_drive_target_v1',
  `WITH touched AS (
     UPDATE claims SET last_active_at = $3
     WHERE id = $1 AND tenant_id = $2 AND ${isActivityDue('$3')}
   )
   ${liveGuestSelect('s.guest_token_ciphertext', ',\n          c.paused_at IS NOT NULL AS paused')}`,
);

/**
 * driveTargetRow records a driving call as the tenant's claim's activity and reads the claim, its
 * sandbox, its guest (token included) and its pause, in one statement. Undefined when the tenant
 * has no such claim (nothing is written then).
 */
export function driveTargetRow(
  sql: PoolTarget,
  tenantId: string,
  claimId: string,
  now: Date,
): Promise<DriveTargetRow | undefined> {
  return sqlOf(sql).row(driveTarget, claimId, tenantId, now);
}
