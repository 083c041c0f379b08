import type { Prisma } from '@cubicle/db';
import { nowOf, type Deps } from '../context.js';
import { insertUsageHours } from './usage-facts-sql.js';

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
export async function rollupUsage(deps: Deps): Promise<RollupResult> {
  const now = nowOf(deps);
  return deps.db.$transaction(
    async (tx) => {
      const [state] = await tx.$queryRaw<{ rolled_to: Date | null; previous: Date | null }[]>`
        SELECT rolled_to, previous_rolled_to AS previous FROM usage_rollup_state
        WHERE id = 'usage' FOR UPDATE`;
      const windowStart = state?.previous ?? (await oldestFact(tx));
      await tx.$executeRaw`
        CREATE TEMP TABLE usage_targets (pool_id text, hour timestamptz,
          PRIMARY KEY (pool_id, hour)) ON COMMIT DROP`;
      const dirty = await tx.$executeRaw`
        WITH d AS (DELETE FROM usage_dirty RETURNING pool_id, from_at, to_at)
        INSERT INTO usage_targets (pool_id, hour)
        SELECT DISTINCT d.pool_id, g.h FROM d,
          generate_series(date_trunc('hour', d.from_at, 'UTC'), d.to_at, interval '1 hour') g(h)
        ON CONFLICT DO NOTHING`;
      if (windowStart) {
        await tx.$executeRaw`
          INSERT INTO usage_targets (pool_id, hour)
          SELECT p.id, g.h FROM pools p,
            generate_series(date_trunc('hour', ${windowStart}::timestamptz, 'UTC'),
                            ${now}::timestamptz, interval '1 hour') g(h)
          WHERE p.deleted_at IS NULL OR p.deleted_at > ${windowStart}::timestamptz - interval '1 day'
          ON CONFLICT DO NOTHING`;
      }
      // Fresh statistics: the planner otherwise guesses the temp table's size.
      await tx.$executeRaw`ANALYZE usage_targets`;
      const [{ n: targets } = { n: 0n }] = await tx.$queryRaw<{ n: bigint }[]>`
        SELECT count(*) AS n FROM usage_targets`;
      await tx.$executeRaw`
        DELETE FROM usage_hourly u USING usage_targets t
        WHERE u.pool_id = t.pool_id AND u.hour = t.hour`;
      const rows = await tx.$executeRaw(insertUsageHours(now));
      await tx.$executeRaw`
        UPDATE usage_rollup_state
        SET previous_rolled_to = rolled_to,
            rolled_to = GREATEST(rolled_to, ${now}::timestamptz),
            updated_at = CURRENT_TIMESTAMP
        WHERE id = 'usage'`;
      return { targets: Number(targets), rows, dirty, rolledTo: now };
    },
    { timeout: ROLLUP_TIMEOUT_MS, maxWait: 30_000 },
  );
}

/** oldestFact is where the first rollups start: the earliest recorded interval start. */
async function oldestFact(tx: Prisma.TransactionClient): Promise<Date | null> {
  const [row] = await tx.$queryRaw<{ at: Date | null }[]>`
    SELECT LEAST((SELECT min(activated_at) FROM claims),
                 (SELECT min(ready_at) FROM sandboxes),
                 (SELECT min(started_at) FROM runs)) AS at`;
  return row?.at ?? null;
}
