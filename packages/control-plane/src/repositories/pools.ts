// The pools repository: the statement reconcile reads a pool's whole state with.
import { sqlOf, statement, type SqlTarget } from '@cubicle/db';

/** One pool with the counts one reconcile of it decides from (every number cast to int). */
export interface PoolStateRow {
  id: string;
  tenant_id: string;
  state: string;
  generation: number;
  min_size: number;
  initial_size: number;
  max_size: number;
  timed_out: string[];
  retire: string[];
  provisioning: number;
  warm: number;
  claimed: number;
  pending: number;
  tenant_room: number;
  recent_failures: number;
  outstanding: number;
}

// $1 pool id, $2 tenant id, $3 provisioning older than this has timed out, $4 failures since,
// $5 the control plane's own failure reasons. The counts are taken as if the timed-out sandboxes
// were already failed and the retired ones already releasing. Only live sandboxes of the pool
// are scanned (the `(pool_id, state)` index): ended ones count only as recent failures.
const poolState = statement<
  PoolStateRow,
  [poolId: string, tenantId: string, staleBefore: Date, failuresSince: Date, ownFailures: string[]]
>(
  'cubicle_pool_state_v1',
  `
  WITH pool AS (
    SELECT id, tenant_id, state::text AS state, generation, min_size, initial_size, max_size
    FROM pools WHERE id = $1 AND tenant_id = $2
  ), live AS (
    SELECT id, state::text AS state, generation,
           state = 'provisioning' AND created_at < $3 AS is_timed_out
    FROM sandboxes
    WHERE pool_id = $1 AND state IN ('provisioning', 'warm', 'claimed')
  )
  SELECT pool.*, counts.* FROM pool CROSS JOIN LATERAL (
    SELECT
      coalesce(array_agg(m.id) FILTER (WHERE m.is_timed_out), '{}') AS timed_out,
      coalesce(array_agg(m.id) FILTER (WHERE m.is_retired), '{}') AS retire,
      count(*) FILTER (WHERE m.generation = pool.generation AND m.state = 'provisioning'
                         AND NOT m.is_timed_out AND NOT m.is_retired)::int AS provisioning,
      count(*) FILTER (WHERE m.generation = pool.generation AND m.state = 'warm'
                         AND NOT m.is_retired)::int AS warm,
      count(*) FILTER (WHERE m.state = 'claimed')::int AS claimed,
      (SELECT count(*)::int FROM claims WHERE pool_id = $1 AND status = 'pending') AS pending,
      greatest(0,
        (SELECT max_sandboxes FROM tenants WHERE id = $2)
        - (SELECT count(*)::int FROM sandboxes
             WHERE tenant_id = $2 AND state IN ('provisioning', 'warm', 'claimed', 'releasing'))
        + count(*) FILTER (WHERE m.is_timed_out))::int AS tenant_room,
      (SELECT count(*)::int FROM sandboxes
         WHERE pool_id = $1 AND failure_reason IS NOT NULL
           AND failure_reason <> ALL($5::text[]) AND ended_at > $4) AS recent_failures,
      count(*) FILTER (WHERE m.state = 'provisioning')::int
        + (SELECT count(*)::int FROM sandboxes
             WHERE pool_id = $1 AND state IN ('releasing', 'failed')) AS outstanding
    FROM (
      SELECT live.*, NOT live.is_timed_out AND live.state IN ('warm', 'provisioning')
                     AND (pool.state = 'draining' OR live.generation < pool.generation) AS is_retired
      FROM live
    ) m
  ) counts`,
);

/**
 * poolStateRow reads a pool and everything one reconcile of it needs in a single statement (it
 * runs for every pool on every sweep and nudge, so round trips are what it costs); undefined
 * when the tenant has no such pool. On either kind of target: the reconcile pass reads it in its
 * ORM transaction under the pool's lock, the look before it on the pool (where the ORM's
 * per-query CPU was most of its cost); every column decodes alike on both.
 */
export function poolStateRow(
  target: SqlTarget,
  tenantId: string,
  poolId: string,
  staleBefore: Date,
  failuresSince: Date,
  ownFailures: string[],
): Promise<PoolStateRow | undefined> {
  return sqlOf(target).row(poolState, poolId, tenantId, staleBefore, failuresSince, ownFailures);
}
