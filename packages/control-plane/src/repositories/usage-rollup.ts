import { statement } from '@cubicle/db';

// The usage rollup's statements, all run in its one Prisma interactive transaction (sqlOf(tx)):
// rows decode the Prisma way (count → bigint). The temp table usage_targets holds the
// (pool, hour) pairs this rollup recomputes; it is dropped at commit.

/** The rollup's progress, locked: concurrent rollups queue here. */
export const lockUsageRollupState = statement<
  { rolled_to: Date | null; previous: Date | null },
  []
>(
  'cubicle_usage_rollup_state_v1',
  `SELECT rolled_to, previous_rolled_to AS previous FROM usage_rollup_state
   WHERE id = 'usage' FOR UPDATE`,
);

/** Where the first rollups start: the earliest recorded interval start. */
export const selectOldestUsageFact = statement<{ at: Date | null }, []>(
  'cubicle_usage_oldest_fact_v1',
  `SELECT LEAST((SELECT min(activated_at) FROM claims),
                (SELECT min(ready_at) FROM sandboxes),
                (SELECT min(started_at) FROM runs)) AS at`,
);

export const createUsageTargets = statement<never, []>(
  'cubicle_usage_targets_create_v1',
  `CREATE TEMP TABLE usage_targets (pool_id text, hour timestamptz,
     PRIMARY KEY (pool_id, hour)) ON COMMIT DROP`,
);

/** Consumes the late-fact spans the triggers marked; their hours become targets. */
export const targetDirtyUsageHours = statement<never, []>(
  'cubicle_usage_targets_dirty_v1',
  `WITH d AS (DELETE FROM usage_dirty RETURNING pool_id, from_at, to_at)
   INSERT INTO usage_targets (pool_id, hour)
   SELECT DISTINCT d.pool_id, g.h FROM d,
     generate_series(date_trunc('hour', d.from_at, 'UTC'), d.to_at, interval '1 hour') g(h)
   ON CONFLICT DO NOTHING`,
);

/** Every hour of [windowStart's hour, now] for every pool not deleted before the window. */
export const targetUsageWindow = statement<never, [windowStart: Date, now: Date]>(
  'cubicle_usage_targets_window_v1',
  `INSERT INTO usage_targets (pool_id, hour)
   SELECT p.id, g.h FROM pools p,
     generate_series(date_trunc('hour', $1::timestamptz, 'UTC'),
                     $2::timestamptz, interval '1 hour') g(h)
   WHERE p.deleted_at IS NULL OR p.deleted_at > $1::timestamptz - interval '1 day'
   ON CONFLICT DO NOTHING`,
);

/** Fresh statistics: the planner otherwise guesses the temp table's size. */
export const analyzeUsageTargets = statement<never, []>(
  'cubicle_usage_targets_analyze_v1',
  'ANALYZE usage_targets',
);

export const countUsageTargets = statement<{ n: bigint }, []>(
  'cubicle_usage_targets_count_v1',
  'SELECT count(*) AS n FROM usage_targets',
);

/** Drops the stored rows of the target hours (they are recomputed whole). */
export const deleteTargetUsageHours = statement<never, []>(
  'cubicle_usage_hours_delete_v1',
  `DELETE FROM usage_hourly u USING usage_targets t
   WHERE u.pool_id = t.pool_id AND u.hour = t.hour`,
);

/** Records the rollup's progress: facts up to `now` are counted. */
export const advanceUsageRollupState = statement<never, [now: Date]>(
  'cubicle_usage_rollup_advance_v1',
  `UPDATE usage_rollup_state
   SET previous_rolled_to = rolled_to,
       rolled_to = GREATEST(rolled_to, $1::timestamptz),
       updated_at = CURRENT_TIMESTAMP
   WHERE id = 'usage'`,
);
