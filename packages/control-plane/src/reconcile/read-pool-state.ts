import type { Prisma, sqlPoolOf } from '@cubicle/db';
import { CONTROL_PLANE_FAILURES } from './failure-reasons.js';
import type { PoolSnapshot } from './plan-pool.js';

/** A provisioning sandbox older than this is considered lost and replaced. */
export const PROVISION_TIMEOUT_MS = 5 * 60_000;
const FAILURE_WINDOW_MS = 60_000;

/** The pool columns reconcile decides from. */
export interface PoolForReconcile {
  id: string;
  tenantId: string;
  state: string;
  generation: number;
  minSize: number;
  initialSize: number;
  maxSize: number;
}

/** PoolState is what one reconcile of a pool acts on: what to retire, and the numbers to plan from. */
export interface PoolState {
  /** Provisioning for longer than PROVISION_TIMEOUT_MS: marked failed. */
  timedOut: string[];
  /** Unclaimed sandboxes that no longer match: all when draining, older generations otherwise. */
  retire: string[];
  /** The numbers planCreate decides from, as they are once the two lists above have moved. */
  snapshot: Omit<PoolSnapshot, 'min' | 'initial' | 'max'>;
  /** Sandboxes with a job to (re)enqueue: provisioning, releasing or failed (enqueueOutstanding). */
  outstanding: number;
}

interface StateRow {
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

/**
 * ReadRows runs one statement with positional parameters: over the ORM's transaction (the
 * reconcile pass, under its lock) or over node-postgres (the look before it, which runs for
 * every nudge and sweep, where the ORM's per-query CPU was most of its cost).
 */
export type ReadRows = (statement: {
  name: string;
  text: string;
  values: unknown[];
}) => Promise<unknown[]>;

export const readRowsOfTx =
  (tx: Pick<Prisma.TransactionClient, '$queryRawUnsafe'>): ReadRows =>
  ({ text, values }) =>
    tx.$queryRawUnsafe<unknown[]>(text, ...values);

export const readRowsOfPool =
  (pool: ReturnType<typeof sqlPoolOf>): ReadRows =>
  async (statement) =>
    (await pool.query(statement)).rows;

// $1 pool id, $2 tenant id, $3 provisioning older than this has timed out, $4 failures since,
// $5 the control plane's own failure reasons. The counts are taken as if the timed-out sandboxes
// were already failed and the retired ones already releasing. Only live sandboxes of the pool
// are scanned (the `(pool_id, state)` index): ended ones count only as recent failures.
const POOL_STATE = `
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
  ) counts`;

/**
 * readPoolState reads a pool and everything one reconcile of it needs in a single statement (it
 * runs for every pool on every sweep and nudge, so round trips are what it costs); null when the
 * tenant has no such pool.
 */
export async function readPoolState(
  read: ReadRows,
  tenantId: string,
  poolId: string,
  now: Date,
): Promise<(PoolState & { pool: PoolForReconcile }) | null> {
  const stale = new Date(now.getTime() - PROVISION_TIMEOUT_MS);
  const since = new Date(now.getTime() - FAILURE_WINDOW_MS);
  const rows = (await read({
    name: 'cubicle_pool_state_v1',
    text: POOL_STATE,
    values: [poolId, tenantId, stale, since, CONTROL_PLANE_FAILURES],
  })) as StateRow[];
  const row = rows[0];
  if (!row) return null;
  return {
    pool: {
      id: row.id,
      tenantId: row.tenant_id,
      state: row.state,
      generation: row.generation,
      minSize: row.min_size,
      initialSize: row.initial_size,
      maxSize: row.max_size,
    },
    timedOut: row.timed_out,
    retire: row.retire,
    snapshot: {
      provisioning: row.provisioning,
      warm: row.warm,
      claimed: row.claimed,
      pending: row.pending,
      tenantRoom: row.tenant_room,
      recentFailures: row.recent_failures,
    },
    outstanding: row.outstanding,
  };
}
