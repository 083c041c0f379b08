// The lifecycle's own statements: those that move claim and sandbox states (through the SQL
// functions in packages/db/sql/functions) or judge a claim's deadlines. They are the lifecycle's
// repository module rather than the claims repository's, because only the lifecycle may move a
// state or compare a status (state-writes.test.ts, claim-status.test.ts); the rows they answer
// are mapped by the claims repository (claimRowOf).
import { statement } from '@cubicle/db';
import type { ClaimJsonRow } from '../repositories/claims.js';

/**
 * The claim hot path, one statement per batch: the function takes one JSON text per item and
 * parses each in the item's own subtransaction. The items travel as one text, one per line,
 * split by Postgres: JSON.stringify never writes a raw line feed (it escapes every control
 * character), and a split parses nothing, so an item Postgres cannot store still fails alone,
 * inside the function. As a text[] parameter, node-postgres escaped every quote of every item:
 * ~45 µs of the API's CPU per claim in bench:claim's bursts. Its rows are parsed by
 * ClaimBatchRow (claim-outcome.ts). Named: each connection plans it once, then only binds and
 * runs it.
 */
export const claimBatch = statement<unknown, [itemsByLine: string]>(
  'cubicle_claim_batch_v6',
  'SELECT * FROM cubicle_claim_batch(string_to_array($1::text, chr(10))) ORDER BY idx',
);

/** cubicle_end_claim: releases a live claim, its sandbox, its tickets and webhooks at once. */
export const endClaim = statement<
  ClaimJsonRow & { ended: boolean },
  [
    tenantId: string,
    claimId: string,
    reason: string,
    now: Date,
    deliveryIds: string[],
    eventId: string,
  ]
>(
  'cubicle_end_claim_v1',
  'SELECT ended, claim, pool_name, sandbox FROM cubicle_end_claim($1, $2, $3::release_reason, $4, $5::text[], $6)',
);

/** cubicle_fulfil_pending: warm sandboxes for a pool's oldest pending claims (in an ORM tx). */
export const fulfilPending = statement<
  { claim_id: string; tenant_id: string; sandbox_id: string },
  [poolId: string, now: Date, limit: number]
>(
  'cubicle_fulfil_pending_v1',
  'SELECT claim_id, tenant_id, sandbox_id FROM cubicle_fulfil_pending($1, $2::timestamptz, $3::int)',
);

/**
 * Live claims whose deadline has passed at $1, oldest TTL first, up to $2, each with the first
 * rule it broke (the hard maximum lifetime, the TTL, then the heartbeat window, which only an
 * active claim has) and when it became due. While a human holds the claim (an active handoff)
 * only the hard maximum ends it: its agent is not idle, it waits (the handoff's lease ends that).
 * A paused claim has no idle window (paused time is not idle time) and its expires_at reads its
 * hard maximum while paused (claim-pauses.ts), so only the hard maximum ends it too.
 */
export const claimsDueToEnd = statement<
  {
    id: string;
    tenant_id: string;
    reason: 'max_lifetime' | 'ttl_expired' | 'idle_timeout';
    due_at: Date;
  },
  [now: Date, limit: number]
>(
  'cubicle_claims_due_to_end_v3',
  `SELECT id, tenant_id,
      CASE
        WHEN max_expires_at <= $1 THEN 'max_lifetime'
        WHEN expires_at <= $1 THEN 'ttl_expired'
        ELSE 'idle_timeout'
      END AS reason,
      LEAST(max_expires_at, expires_at,
            COALESCE(last_heartbeat_at + make_interval(secs => idle_timeout_seconds), 'infinity'::timestamptz)) AS due_at
    FROM claims
    WHERE status <> 'released' AND (
      max_expires_at <= $1 OR (
        (expires_at <= $1 OR
          (status = 'active' AND idle_timeout_seconds IS NOT NULL AND paused_at IS NULL
            AND last_heartbeat_at + make_interval(secs => idle_timeout_seconds) <= $1))
        AND NOT EXISTS (SELECT 1 FROM handoffs h WHERE h.claim_id = claims.id AND h.state = 'active')
      )
    )
    ORDER BY expires_at
    LIMIT $2`,
);

/**
 * The claim a handoff is asked for, locked (FOR UPDATE) for the request's transaction: two
 * requests for one claim run one after the other, so the second sees the first's handoff.
 */
export const lockClaimForHandoff = statement<
  {
    status: string;
    expires_at: Date;
    max_expires_at: Date;
    sandbox_id: string | null;
    active_handoff_id: string | null;
  },
  [claimId: string, tenantId: string]
>(
  'cubicle_lock_claim_for_handoff_v1',
  `SELECT c.status, c.expires_at, c.max_expires_at, c.sandbox_id,
          (SELECT h.id FROM handoffs h WHERE h.claim_id = c.id AND h.state = 'active') AS active_handoff_id
     FROM claims c WHERE c.id = $1 AND c.tenant_id = $2 FOR UPDATE OF c`,
);

/**
 * Holds a live claim's deadlines while a human holds its desktop: the TTL deadline is moved to
 * at least $2 (the handoff's lease), never past the hard maximum, and the heartbeat window
 * restarts at $3. Never shortens anything.
 */
export const holdClaimDeadline = statement<
  { expires_at: Date },
  [claimId: string, until: Date, now: Date]
>(
  'cubicle_hold_claim_deadline_v1',
  `UPDATE claims
      SET expires_at = GREATEST(expires_at, LEAST($2::timestamptz, max_expires_at)),
          last_heartbeat_at = GREATEST(last_heartbeat_at, $3::timestamptz),
          updated_at = $3::timestamptz
    WHERE id = $1 AND status <> 'released'
    RETURNING expires_at`,
);

/**
 * Gives a claim back its deadlines when a handoff ends: what was left of its TTL when the agent
 * asked ($2 ms) counts again from $3, capped at the hard maximum; the heartbeat window restarts.
 */
export const restoreClaimDeadline = statement<
  { expires_at: Date },
  [claimId: string, ttlLeftMs: number, now: Date]
>(
  'cubicle_restore_claim_deadline_v1',
  `UPDATE claims
      SET expires_at = LEAST($3::timestamptz + make_interval(secs => $2::double precision / 1000), max_expires_at),
          last_heartbeat_at = $3::timestamptz,
          updated_at = $3::timestamptz
    WHERE id = $1 AND status <> 'released'
    RETURNING expires_at`,
);
