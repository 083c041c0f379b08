import { statement } from '@cubicle/db';

/**
 * insertUsageHours computes the usage of every (pool, hour) in the temp table usage_targets from
 * the facts and inserts one usage_hourly row per pair that has any. Each interval is cut at hour
 * boundaries, so its seconds land in the hours they happened in; an interval still open counts
 * until `now` (the facts' clock). Seconds are sums of exact millisecond overlaps.
 *
 * Facts: a claim is active from activated_at to released_at; a sandbox is warm from ready_at
 * to the first of claimed_at / ended_at, with the CPU and memory it was provisioned with
 * (sandboxes.cpu_millis / memory_mb, copied from its pool at insert); a run executes from
 * started_at to finished_at; a claim is paused from a claim_pauses row's started_at to its
 * ended_at, or the claim's release when it ended paused (part of its claim seconds: active =
 * claim - paused); egress denials are the counts of the egress point's 'denied' lines
 * (egress_events, collapsed per destination and minute) in the hour of their minute.
 */
export const insertUsageHours = statement<never, [now: Date]>(
  'cubicle_usage_hours_insert_v4',
  `
    WITH b AS (
      SELECT min(hour) AS lo, max(hour) + interval '1 hour' AS hi, $1::timestamptz AS now
      FROM usage_targets
    ),
    iv AS (
      SELECT c.pool_id, 'claim' AS kind, c.activated_at AS s, COALESCE(c.released_at, b.now) AS e,
             0 AS cpu_millis, 0 AS memory_mb
        FROM claims c, b
        WHERE c.activated_at IS NOT NULL AND c.activated_at < b.hi
          AND (c.released_at IS NULL OR c.released_at > b.lo)
      UNION ALL
      SELECT s.pool_id, 'warm', s.ready_at, COALESCE(LEAST(s.claimed_at, s.ended_at), b.now),
             COALESCE(s.cpu_millis, 0), COALESCE(s.memory_mb, 0)
        FROM sandboxes s, b
        WHERE s.ready_at IS NOT NULL AND s.ready_at < b.hi
          AND (LEAST(s.claimed_at, s.ended_at) IS NULL OR LEAST(s.claimed_at, s.ended_at) > b.lo)
      UNION ALL
      SELECT cp.pool_id, 'paused', cp.started_at, COALESCE(cp.ended_at, c.released_at, b.now), 0, 0
        FROM claim_pauses cp JOIN claims c ON c.id = cp.claim_id, b
        WHERE cp.started_at < b.hi
          AND (COALESCE(cp.ended_at, c.released_at) IS NULL OR COALESCE(cp.ended_at, c.released_at) > b.lo)
      UNION ALL
      SELECT c.pool_id, 'run', r.started_at, COALESCE(r.finished_at, b.now), 0, 0
        FROM runs r JOIN claims c ON c.id = r.claim_id, b
        WHERE r.started_at IS NOT NULL AND r.started_at < b.hi
          AND (r.finished_at IS NULL OR r.finished_at > b.lo)
    ),
    split AS MATERIALIZED (
      SELECT iv.pool_id, iv.kind, g.h, iv.cpu_millis, iv.memory_mb,
             EXTRACT(EPOCH FROM LEAST(iv.e, g.h + interval '1 hour') - GREATEST(iv.s, g.h)) AS secs,
             (iv.s >= g.h AND iv.s < g.h + interval '1 hour') AS starts_here
      FROM iv, b,
        generate_series(date_trunc('hour', GREATEST(iv.s, b.lo), 'UTC'),
                        LEAST(iv.e, b.hi) - interval '1 millisecond', interval '1 hour') g(h)
      WHERE iv.e > iv.s
    ),
    -- Aggregated before it meets the targets: the planner cannot estimate the split's size, and
    -- a join per split row would probe the targets once per interval.
    agg AS (
      SELECT pool_id, h,
             count(*) FILTER (WHERE kind = 'claim' AND starts_here) AS claims,
             COALESCE(sum(secs) FILTER (WHERE kind = 'claim'), 0) AS claim_seconds,
             COALESCE(sum(secs) FILTER (WHERE kind = 'warm'), 0) AS warm_seconds,
             COALESCE(sum(secs * cpu_millis / 1000.0) FILTER (WHERE kind = 'warm'), 0) AS warm_cpu,
             COALESCE(sum(secs * memory_mb / 1024.0) FILTER (WHERE kind = 'warm'), 0) AS warm_mem,
             COALESCE(sum(secs) FILTER (WHERE kind = 'run'), 0) AS run_seconds,
             count(*) FILTER (WHERE kind = 'run' AND starts_here) AS runs,
             COALESCE(sum(secs) FILTER (WHERE kind = 'paused'), 0) AS paused_seconds
      FROM split GROUP BY pool_id, h
    ),
    -- Denials are counted where their minute falls (a line's count keeps rising within it).
    den AS (
      SELECT e.pool_id, date_trunc('hour', e.minute, 'UTC') AS h, sum(e.count) AS denials
      FROM egress_events e, b
      WHERE e.verdict = 'denied' AND e.minute >= b.lo AND e.minute < b.hi
      GROUP BY 1, 2
    ),
    -- A full join: an hour may hold denials of a claim whose interval lies in another hour's row.
    hours AS (
      SELECT COALESCE(a.pool_id, d.pool_id) AS pool_id, COALESCE(a.h, d.h) AS h,
             COALESCE(a.claims, 0) AS claims, COALESCE(a.claim_seconds, 0) AS claim_seconds,
             COALESCE(a.warm_seconds, 0) AS warm_seconds, COALESCE(a.warm_cpu, 0) AS warm_cpu,
             COALESCE(a.warm_mem, 0) AS warm_mem, COALESCE(a.run_seconds, 0) AS run_seconds,
             COALESCE(a.runs, 0) AS runs, COALESCE(d.denials, 0) AS denials,
             COALESCE(a.paused_seconds, 0) AS paused_seconds
      FROM agg a FULL JOIN den d ON d.pool_id = a.pool_id AND d.h = a.h
    )
    INSERT INTO usage_hourly (tenant_id, pool_id, hour, claims, claim_seconds, warm_seconds,
                              warm_cpu_core_seconds, warm_memory_gib_seconds, run_seconds, runs,
                              egress_denials, paused_seconds)
    SELECT p.tenant_id, a.pool_id, a.h, a.claims, a.claim_seconds, a.warm_seconds,
           a.warm_cpu, a.warm_mem, a.run_seconds, a.runs, a.denials, a.paused_seconds
    FROM hours a
    JOIN usage_targets t ON t.pool_id = a.pool_id AND t.hour = a.h
    JOIN pools p ON p.id = a.pool_id`,
);
