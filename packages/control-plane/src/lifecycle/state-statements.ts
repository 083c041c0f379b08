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
  'cubicle_claim_batch_v5',
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
 * active claim has) and when it became due.
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
  'cubicle_claims_due_to_end_v1',
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
      expires_at <= $1 OR max_expires_at <= $1 OR
      (status = 'active' AND idle_timeout_seconds IS NOT NULL
        AND last_heartbeat_at + make_interval(secs => idle_timeout_seconds) <= $1)
    )
    ORDER BY expires_at
    LIMIT $2`,
);
