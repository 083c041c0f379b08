// Pause and resume (issue 34): the statements that read a claim for a pause, mark it paused or
// running with its pause interval (claim_pauses), record activity (auto-pause's idle clock), and
// find idle claims for auto-pause. The pause system (src/pause) runs them under its advisory lock.
import { sqlOf, statement, type SqlTarget } from '@cubicle/db';

/**
 * When claim `c` was last driven, viewed or run in: its activation, its last driving call (or
 * run start, or viewer connection: last_active_at), its last viewer disconnection, its last run's
 * end. Auto-pause's idle clock starts there.
 */
const IDLE_SINCE = `GREATEST(c.activated_at, c.last_active_at,
    (SELECT max(v.disconnected_at) FROM viewer_connections v WHERE v.claim_id = c.id),
    (SELECT max(r.finished_at) FROM runs r WHERE r.claim_id = c.id))`;

/** What a pause or resume needs to know of a claim, read under the claim's pause lock. */
export interface PauseTargetRow {
  pool_id: string;
  pool_name: string;
  sandbox_id: string | null;
  backend: string | null;
  /** cubicle_claim_is_live at the caller's clock. */
  live: boolean;
  paused_at: Date | null;
  expires_at: Date;
  /** When the claim was last driven, viewed or run in (IDLE_SINCE). */
  idle_since: Date | null;
  idle_pause_seconds: number | null;
  handoff_id: string | null;
  /** A run executes in it or a viewer is connected (auto-pause leaves it alone). */
  busy: boolean;
}

const pauseTarget = statement<PauseTargetRow, [claimId: string, tenantId: string, now: Date]>(
  'cubicle_pause_target_v1',
  `SELECT c.pool_id, p.name AS pool_name, c.sandbox_id, s.backend::text AS backend,
          cubicle_claim_is_live(c.status, c.expires_at, $3) AS live,
          c.paused_at, c.expires_at,
          ${IDLE_SINCE} AS idle_since, p.idle_pause_seconds,
          (SELECT h.id FROM handoffs h WHERE h.claim_id = c.id AND h.state = 'active') AS handoff_id,
          (EXISTS (SELECT 1 FROM runs r WHERE r.claim_id = c.id AND r.status IN ('queued', 'running'))
            OR EXISTS (SELECT 1 FROM viewer_connections v
                       WHERE v.claim_id = c.id AND v.disconnected_at IS NULL)) AS busy
   FROM claims c JOIN pools p ON p.id = c.pool_id
        LEFT JOIN sandboxes s ON s.id = c.sandbox_id
   WHERE c.id = $1 AND c.tenant_id = $2`,
);

/** readPauseTarget reads the tenant's claim for a pause or resume; undefined when it has none. */
export function readPauseTarget(sql: SqlTarget, tenantId: string, claimId: string, now: Date) {
  return sqlOf(sql).row(pauseTarget, claimId, tenantId, now);
}

/**
 * The pause itself: the claim's TTL deadline becomes its hard maximum while paused (so every
 * liveness check keeps it live and only max_expires_at ends it), and the TTL left is kept on the
 * pause's row for resume. The unique open-pause index makes a second open pause impossible.
 */
const markPaused = statement<never, [claimId: string, now: Date, pauseId: string, reason: string]>(
  'cubicle_claim_mark_paused_v1',
  `WITH c AS (
     UPDATE claims c SET paused_at = $2, expires_at = c.max_expires_at, updated_at = $2
     FROM (SELECT id, expires_at FROM claims WHERE id = $1) old
     WHERE c.id = old.id AND c.paused_at IS NULL
     RETURNING c.id, c.tenant_id, c.pool_id, old.expires_at AS expires_before)
   INSERT INTO claim_pauses (id, tenant_id, pool_id, claim_id, reason, started_at, expires_before)
   SELECT $3, tenant_id, pool_id, id, $4, $2, expires_before FROM c`,
);

/**
 * The resume: the TTL and the idle window restart where they stood (expires_at = now + the TTL
 * left at pause, capped at the hard maximum; last_heartbeat_at moved on by the time paused), the
 * pause's time is added to paused_ms and its interval closed. Answers the pause's length.
 */
const markResumed = statement<{ paused_ms: string }, [claimId: string, now: Date]>(
  'cubicle_claim_mark_resumed_v1',
  `WITH p AS (
     UPDATE claim_pauses SET ended_at = $2
     WHERE claim_id = $1 AND ended_at IS NULL
     RETURNING started_at, expires_before
   ), c AS (
     UPDATE claims SET
       paused_at = NULL,
       paused_ms = claims.paused_ms + GREATEST(0, (EXTRACT(EPOCH FROM ($2 - p.started_at)) * 1000)::bigint),
       expires_at = LEAST(max_expires_at, p.expires_before + ($2 - p.started_at)),
       last_heartbeat_at = last_heartbeat_at + ($2 - p.started_at),
       updated_at = $2
     FROM p WHERE claims.id = $1 AND claims.paused_at IS NOT NULL
     RETURNING GREATEST(0, (EXTRACT(EPOCH FROM ($2 - p.started_at)) * 1000)::bigint)::text AS paused_ms
   )
   SELECT paused_ms FROM c`,
);

/** markClaimPaused marks a running claim paused; 0 when it was paused already. */
export function markClaimPaused(
  sql: SqlTarget,
  claimId: string,
  now: Date,
  pauseId: string,
  reason: 'api' | 'idle',
): Promise<number> {
  return sqlOf(sql).exec(markPaused, claimId, now, pauseId, reason);
}

/** markClaimResumed marks a paused claim running; the pause's ms, or null when it was running. */
export async function markClaimResumed(
  sql: SqlTarget,
  claimId: string,
  now: Date,
): Promise<number | null> {
  const row = await sqlOf(sql).row(markResumed, claimId, now);
  return row ? Number(row.paused_ms) : null;
}

/**
 * Activity (a driving call, a viewer connection, a run start) moves auto-pause's idle clock, at
 * most once a second per claim (a burst of calls writes once). It also answers whether the claim
 * is paused (then always written): the one statement a lane job runs before it talks to the guest.
 */
/**
 * isActivityDue says a claim's activity is to be written at time `now` (a parameter): always
 * while it is paused (the write's answer says so), else at most once a second.
 */
export const isActivityDue = (now: string) =>
  `(paused_at IS NOT NULL OR last_active_at IS NULL
                      OR last_active_at < ${now}::timestamptz - interval '1 second')`;

const touchActivity = statement<{ paused: boolean }, [claimId: string, now: Date]>(
  'cubicle_claim_touch_activity_v1',
  `UPDATE claims SET last_active_at = $2
   WHERE id = $1 AND ${isActivityDue('$2')}
   RETURNING paused_at IS NOT NULL AS paused`,
);

/** touchClaimActivity records activity; true when the claim is paused (the caller resumes it). */
export async function touchClaimActivity(
  sql: SqlTarget,
  claimId: string,
  now: Date,
): Promise<boolean> {
  return (await sqlOf(sql).row(touchActivity, claimId, now))?.paused ?? false;
}

/** A claim auto-pause may pause: its pool opted in and nothing drove it for that long. */
export interface IdleClaimRow {
  id: string;
  tenant_id: string;
  sandbox_id: string;
}

const idleClaims = statement<IdleClaimRow, [now: Date, limit: number]>(
  'cubicle_idle_claims_v1',
  `SELECT c.id, c.tenant_id, c.sandbox_id
   FROM claims c JOIN pools p ON p.id = c.pool_id
   WHERE p.idle_pause_seconds IS NOT NULL AND c.paused_at IS NULL AND c.sandbox_id IS NOT NULL
     AND cubicle_claim_is_live(c.status, c.expires_at, $1)
     AND ${IDLE_SINCE} + make_interval(secs => p.idle_pause_seconds) <= $1
     AND NOT EXISTS (SELECT 1 FROM handoffs h WHERE h.claim_id = c.id AND h.state = 'active')
     AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.claim_id = c.id AND r.status IN ('queued', 'running'))
     AND NOT EXISTS (SELECT 1 FROM viewer_connections v
                     WHERE v.claim_id = c.id AND v.disconnected_at IS NULL)
   ORDER BY c.id
   LIMIT $2`,
);

/** idleClaimRows lists up to `limit` claims auto-pause should pause at `now`. */
export function idleClaimRows(sql: SqlTarget, now: Date, limit: number) {
  return sqlOf(sql).rows(idleClaims, now, limit);
}

const pausedNow = statement<{ paused: boolean }, [claimId: string, tenantId: string]>(
  'cubicle_claim_paused_now_v1',
  'SELECT paused_at IS NOT NULL AS paused FROM claims WHERE id = $1 AND tenant_id = $2',
);

/** isClaimPausedRow tells whether the tenant's claim is paused now (false when there is none). */
export async function isClaimPausedRow(
  sql: SqlTarget,
  tenantId: string,
  claimId: string,
): Promise<boolean> {
  return (await sqlOf(sql).row(pausedNow, claimId, tenantId))?.paused ?? false;
}
