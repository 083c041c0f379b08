// The claims repository: the statements that read claims (for their view, for the guest door,
// for the live-claim memory) and touch their deadlines, with the mappers of a claim row as plain
// SQL gives it (`to_jsonb`) into the ORM's shape. Status changes and liveness rules are the
// lifecycle's (state-writes.test.ts, claim-status.test.ts): its own statements stay with it
// (lifecycle/state-statements.ts), and it judges what these read.
import { sqlOf, statement, type Claim, type Db, type Sandbox } from '@cubicle/db';
import type { PoolTarget } from './pool-target.js';
import { sandboxFromJson } from './sandboxes.js';

type Json = Record<string, unknown>;

/** ClaimRow is a claim with its pool's name and its sandbox, in the ORM's shape. */
export type ClaimRow = Claim & { pool: { name: string }; sandbox: Sandbox | null };

const date = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string));
const dateOrThrow = (v: unknown) => new Date(v as string);

/**
 * claimFromJson turns a claim's `to_jsonb` (a claim statement, a SQL function's answer) into the
 * shape Prisma returns, so one view function renders both paths.
 */
export function claimFromJson(j: Json): Claim {
  return {
    id: j.id as string,
    tenantId: j.tenant_id as string,
    poolId: j.pool_id as string,
    sandboxId: (j.sandbox_id as string | null) ?? null,
    name: j.name as string,
    status: j.status as Claim['status'],
    metadata: j.metadata as Claim['metadata'],
    ttlSeconds: j.ttl_seconds as number,
    idleTimeoutSeconds: (j.idle_timeout_seconds as number | null) ?? null,
    expiresAt: dateOrThrow(j.expires_at),
    maxExpiresAt: dateOrThrow(j.max_expires_at),
    lastHeartbeatAt: dateOrThrow(j.last_heartbeat_at),
    releasedAt: date(j.released_at),
    activatedAt: date(j.activated_at),
    releaseReason: (j.release_reason as Claim['releaseReason']) ?? null,
    createdAt: dateOrThrow(j.created_at),
    updatedAt: dateOrThrow(j.updated_at),
    firstConfirmedActionAt: date(j.first_confirmed_action_at),
    egress: (j.egress as Claim['egress'] | undefined) ?? null,
    pausedAt: date(j.paused_at),
    pausedMs: BigInt((j.paused_ms as number | string | undefined) ?? 0),
    lastActiveAt: date(j.last_active_at),
  };
}

/** A claim with what its view shows, as one row of plain SQL gives it (`to_jsonb` of each). */
export interface ClaimJsonRow {
  claim: Record<string, unknown>;
  pool_name: string;
  sandbox: Record<string, unknown> | null;
}

/** claimRowOf turns a ClaimJsonRow into the shape toClaimView renders (the ORM's shape). */
export function claimRowOf(r: ClaimJsonRow): ClaimRow {
  return {
    ...claimFromJson(r.claim),
    pool: { name: r.pool_name },
    sandbox: r.sandbox ? sandboxFromJson(r.sandbox) : null,
  };
}

// The claim rows of `c` with their pool's name and sandbox (without the guest token's
// ciphertext, which the view never renders). Claims are read, heartbeated and extended far more
// often than anything else a client does; as named node-postgres statements they cost a
// fraction of the ORM's query with two includes (measured: API CPU per heartbeat 4.3 ms through
// the ORM's update and read back).
const VIEW_OF = (rows: string) => `
  SELECT to_jsonb(c) AS claim, p.name AS pool_name,
         to_jsonb(s) - 'guest_token_ciphertext' AS sandbox
  FROM ${rows} c JOIN pools p ON p.id = c.pool_id LEFT JOIN sandboxes s ON s.id = c.sandbox_id`;

const claimView = statement<ClaimJsonRow, [claimId: string, tenantId: string]>(
  'cubicle_claim_view_v1',
  `${VIEW_OF('claims')} WHERE c.id = $1 AND c.tenant_id = $2`,
);

const claimHeartbeat = statement<ClaimJsonRow, [claimId: string, tenantId: string, now: Date]>(
  'cubicle_claim_heartbeat_v1',
  `WITH touched AS (
             UPDATE claims SET last_heartbeat_at = $3::timestamptz, updated_at = $3::timestamptz
             WHERE id = $1 AND tenant_id = $2 AND status <> 'released' RETURNING *
           ) ${VIEW_OF('touched')}`,
);

const claimExtend = statement<
  ClaimJsonRow,
  [claimId: string, tenantId: string, ttlSeconds: number, now: Date]
>(
  'cubicle_claim_extend_v1',
  `WITH extended AS (
             UPDATE claims
                SET ttl_seconds = $3::int,
                    expires_at = LEAST($4::timestamptz + make_interval(secs => $3::int), max_expires_at),
                    last_heartbeat_at = $4::timestamptz, updated_at = $4::timestamptz
             WHERE id = $1 AND tenant_id = $2 AND status <> 'released' RETURNING *
           ) ${VIEW_OF('extended')}`,
);

const rowOrNull = (row: ClaimJsonRow | undefined) => (row ? claimRowOf(row) : null);

/** readClaimRow reads the tenant's claim for its view; null when the tenant has no such claim. */
export async function readClaimRow(
  db: Db,
  tenantId: string,
  claimId: string,
): Promise<ClaimRow | null> {
  return rowOrNull(await sqlOf(db).row(claimView, claimId, tenantId));
}

/**
 * touchClaimRow records a heartbeat on a live claim and returns it for its view, in one
 * statement; null when the tenant has no such live claim (the caller tells which).
 */
export async function touchClaimRow(
  db: Db,
  tenantId: string,
  claimId: string,
  now: Date,
): Promise<ClaimRow | null> {
  return rowOrNull(await sqlOf(db).row(claimHeartbeat, claimId, tenantId, now));
}

/**
 * extendClaimRow sets a live claim's TTL from now, its deadline capped at the claim's hard
 * maximum (max_expires_at), counting as a heartbeat; one statement, null as touchClaimRow.
 */
export async function extendClaimRow(
  db: Db,
  tenantId: string,
  claimId: string,
  ttlSeconds: number,
  now: Date,
): Promise<ClaimRow | null> {
  return rowOrNull(await sqlOf(db).row(claimExtend, claimId, tenantId, ttlSeconds, now));
}

const liveClaimsOf = statement<{ id: string }, [ids: string[], now: Date]>(
  'cubicle_live_claims_of_v1',
  `SELECT id FROM claims
                 WHERE id = ANY($1::text[]) AND cubicle_claim_is_live(status, expires_at, $2)`,
);

/** liveClaimIdsAmong answers which of `ids` are live claims at `now` (one indexed query). */
export async function liveClaimIdsAmong(db: Db, ids: string[], now: Date): Promise<Set<string>> {
  const rows = await sqlOf(db).rows(liveClaimsOf, ids, now);
  return new Set(rows.map((r) => r.id));
}

/** A claim with its sandbox's guest, as the guest door reads it before judging its liveness. */
export interface LiveGuestRow {
  status: string;
  expires_at: Date;
  release_reason: string | null;
  sandbox_id: string | null;
  sandbox_state: string | null;
  guest_endpoint: string | null;
  guest_token_ciphertext: Buffer | null;
  has_secrets: boolean;
  /** The claim's active handoff: a human holds the desktop (driving calls are refused). */
  handoff_id: string | null;
}

/**
 * liveGuestSelect reads the claim $1 of tenant $2 as a LiveGuestRow, the token column as `token`
 * gives it, with `extra` columns after: liveGuestRow's statement and the drive target's
 * (drive-target.ts) read the same row.
 */
export const liveGuestSelect = (token: string, extra = '') =>
  `SELECT c.status, c.expires_at, c.release_reason, c.sandbox_id, s.state AS sandbox_state,
                  s.guest_endpoint,
                  ${token} AS guest_token_ciphertext,
                  EXISTS (SELECT 1 FROM claim_secrets cs WHERE cs.claim_id = c.id) AS has_secrets,
                  (SELECT h.id FROM handoffs h WHERE h.claim_id = c.id AND h.state = 'active') AS handoff_id${extra}
           FROM claims c LEFT JOIN sandboxes s ON s.id = c.sandbox_id AND s.tenant_id = c.tenant_id
           WHERE c.id = $1 AND c.tenant_id = $2`;

// Named: planned once per connection; it runs before every guest call the worker makes.
const liveGuest = statement<LiveGuestRow, [claimId: string, tenantId: string, withToken: boolean]>(
  'cubicle_live_guest_v2',
  liveGuestSelect('CASE WHEN $3::boolean THEN s.guest_token_ciphertext END'),
);

/**
 * liveGuestRow reads the tenant's claim, its sandbox and that sandbox's guest in one indexed
 * statement; the token's ciphertext only when asked for (`withToken`). Undefined when the tenant
 * has no such claim. On the pool, or on the client of a caller holding a lock.
 */
export function liveGuestRow(
  target: PoolTarget,
  tenantId: string,
  claimId: string,
  withToken: boolean,
): Promise<LiveGuestRow | undefined> {
  return sqlOf(target).row(liveGuest, claimId, tenantId, withToken);
}
