import type { Prisma } from '@cubicle/db';
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
 * readPoolState reads everything one reconcile of a pool needs in a single statement (it runs
 * for every pool on every sweep, so round trips are what it costs). The counts are taken as if
 * the timed-out sandboxes were already failed and the retired ones already releasing, which is
 * what reconcilePool makes them next, under the same lock. Only live sandboxes of the pool are
 * scanned (the `(pool_id, state)` index): ended ones count only as recent failures.
 */
export async function readPoolState(
  tx: Pick<Prisma.TransactionClient, '$queryRaw'>,
  pool: PoolForReconcile,
  now: Date,
): Promise<PoolState> {
  const stale = new Date(now.getTime() - PROVISION_TIMEOUT_MS);
  const since = new Date(now.getTime() - FAILURE_WINDOW_MS);
  const isDraining = pool.state === 'draining';
  const rows = await tx.$queryRaw<StateRow[]>`
    WITH live AS (
      SELECT id, state::text AS state, generation,
             state = 'provisioning' AND created_at < ${stale} AS is_timed_out
      FROM sandboxes
      WHERE pool_id = ${pool.id} AND state IN ('provisioning', 'warm', 'claimed')
    ), marked AS (
      SELECT *, NOT is_timed_out AND state IN ('warm', 'provisioning')
                AND (${isDraining} OR generation < ${pool.generation}) AS is_retired
      FROM live
    )
    SELECT
      coalesce(array_agg(id) FILTER (WHERE is_timed_out), '{}') AS timed_out,
      coalesce(array_agg(id) FILTER (WHERE is_retired), '{}') AS retire,
      count(*) FILTER (WHERE generation = ${pool.generation} AND state = 'provisioning'
                         AND NOT is_timed_out AND NOT is_retired)::int AS provisioning,
      count(*) FILTER (WHERE generation = ${pool.generation} AND state = 'warm'
                         AND NOT is_retired)::int AS warm,
      count(*) FILTER (WHERE state = 'claimed')::int AS claimed,
      (SELECT count(*)::int FROM claims
         WHERE pool_id = ${pool.id} AND status = 'pending') AS pending,
      greatest(0,
        (SELECT max_sandboxes FROM tenants WHERE id = ${pool.tenantId})
        - (SELECT count(*)::int FROM sandboxes
             WHERE tenant_id = ${pool.tenantId}
               AND state IN ('provisioning', 'warm', 'claimed', 'releasing'))
        + count(*) FILTER (WHERE is_timed_out))::int AS tenant_room,
      (SELECT count(*)::int FROM sandboxes
         WHERE pool_id = ${pool.id} AND failure_reason IS NOT NULL
           AND failure_reason <> ALL(${CONTROL_PLANE_FAILURES}::text[])
           AND ended_at > ${since}) AS recent_failures,
      count(*) FILTER (WHERE state = 'provisioning')::int
        + (SELECT count(*)::int FROM sandboxes
             WHERE pool_id = ${pool.id} AND state IN ('releasing', 'failed')) AS outstanding
    FROM marked`;
  const row = rows[0]!;
  return {
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
