import { sqlOf, type Prisma } from '@cubicle/db';
import { nowOf } from '../context.js';
import type { DbDeps } from '../resources.js';
import { insertUsageHours } from '../repositories/usage-facts.js';
import {
  advanceUsageRollupState,
  analyzeUsageTargets,
  countUsageTargets,
  createUsageTargets,
  deleteTargetUsageHours,
  lockUsageRollupState,
  selectOldestUsageFact,
  targetDirtyUsageHours,
  targetUsageWindow,
} from '../repositories/usage-rollup.js';

export interface RollupResult {
  /** (pool, hour) pairs recomputed. */
  targets: number;
  /** usage_hourly rows written (hours with usage). */
  rows: number;
  /** Late-fact spans consumed from usage_dirty. */
  dirty: number;
  /** The facts' clock when the rollup ran; usage up to here is counted. */
  rolledTo: Date;
}

/** Rollups of 100,000 claims take a few seconds; a bound well above that, not Prisma's 5 s default. */
const ROLLUP_TIMEOUT_MS = 600_000;

/**
 * rollupUsage recomputes whole UTC hours of usage from facts (claims.activated_at/released_at,
 * sandboxes.ready_at/claimed_at/ended_at, runs.started_at/finished_at) and replaces those hours
 * in usage_hourly, in one transaction with its progress. It is idempotent: a run killed midway
 * commits nothing, and running again gives the same rows, because nothing is added to a stored
 * total — each recomputed hour is rewritten from the facts.
 *
 * Which hours: every hour from the hour of the run before last (the first runs: from the oldest
 * fact) to now, for every pool — open intervals grow and the current hour fills — plus the
 * spans the triggers marked in usage_dirty when a fact's time was written after the rollup had
 * passed its hour (late events land in their own hour). Concurrent rollups queue on the state
 * row.
 */
export async function rollupUsage(deps: DbDeps): Promise<RollupResult> {
  const now = nowOf(deps);
  return deps.db.$transaction(
    async (tx) => {
      const sql = sqlOf(tx);
      const state = await sql.row(lockUsageRollupState);
      const windowStart = state?.previous ?? (await oldestFact(tx));
      await sql.exec(createUsageTargets);
      const dirty = await sql.exec(targetDirtyUsageHours);
      if (windowStart) await sql.exec(targetUsageWindow, windowStart, now);
      // Fresh statistics: the planner otherwise guesses the temp table's size.
      await sql.exec(analyzeUsageTargets);
      const { n: targets } = (await sql.row(countUsageTargets)) ?? { n: 0n };
      await sql.exec(deleteTargetUsageHours);
      const rows = await sql.exec(insertUsageHours, now);
      await sql.exec(advanceUsageRollupState, now);
      return { targets: Number(targets), rows, dirty, rolledTo: now };
    },
    { timeout: ROLLUP_TIMEOUT_MS, maxWait: 30_000 },
  );
}

/** oldestFact is where the first rollups start: the earliest recorded interval start. */
async function oldestFact(tx: Prisma.TransactionClient): Promise<Date | null> {
  const row = await sqlOf(tx).row(selectOldestUsageFact);
  return row?.at ?? null;
}
