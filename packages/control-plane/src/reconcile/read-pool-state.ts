import type { SqlTarget } from '@cubicle/db';
import { poolStateRow } from '../repositories/pools.js';
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

/**
 * readPoolState reads a pool and everything one reconcile of it needs in a single statement
 * (poolStateRow): in the reconcile pass's ORM transaction, under its lock, or on the pool for the
 * look before it, which runs for every nudge and sweep; null when the tenant has no such pool.
 */
export async function readPoolState(
  target: SqlTarget,
  tenantId: string,
  poolId: string,
  now: Date,
): Promise<(PoolState & { pool: PoolForReconcile }) | null> {
  const stale = new Date(now.getTime() - PROVISION_TIMEOUT_MS);
  const since = new Date(now.getTime() - FAILURE_WINDOW_MS);
  const row = await poolStateRow(target, tenantId, poolId, stale, since, CONTROL_PLANE_FAILURES);
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
