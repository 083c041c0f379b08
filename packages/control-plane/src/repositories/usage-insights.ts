import type { ReleaseReason } from '@cubicle/contract/api';
import { statement } from '@cubicle/db';

// A pool's recent past from its facts (poolInsights), on node-postgres. Every time parameter is
// cast: node-postgres sends values untyped.

/**
 * Average sandbox counts by state per bucket of [from, to), time-weighted: a desktop warm for
 * 20 s of a minute counts 1/3 in that minute's sample, so short states show instead of falling
 * between two instants. `step` is the bucket as an interval, `stepSeconds` the same in seconds.
 */
export const selectPoolSamples = statement<
  { at: Date; provisioning: number; warm: number; claimed: number },
  [
    poolId: string,
    tenantId: string,
    from: Date,
    to: Date,
    now: Date,
    step: string,
    stepSeconds: number,
  ]
>(
  'cubicle_pool_insight_samples_v1',
  `WITH sb AS (
     SELECT LEAST(created_at, ready_at) AS created_at, ready_at, claimed_at, ended_at
     FROM sandboxes
     WHERE pool_id = $1 AND tenant_id = $2
       AND LEAST(created_at, ready_at) < $4::timestamptz
       AND (ended_at IS NULL OR ended_at > $3::timestamptz)
   ),
   iv AS (
     SELECT 'provisioning' AS state, created_at AS s,
            COALESCE(LEAST(ready_at, ended_at), $5::timestamptz) AS e
       FROM sb
     UNION ALL
     SELECT 'warm', ready_at, COALESCE(LEAST(claimed_at, ended_at), $5::timestamptz) FROM sb
       WHERE ready_at IS NOT NULL
     UNION ALL
     SELECT 'claimed', claimed_at, COALESCE(ended_at, $5::timestamptz) FROM sb
       WHERE claimed_at IS NOT NULL
   ),
   buckets AS (
     SELECT g.t, g.t + $6::interval AS u
     FROM generate_series($3::timestamptz, $4::timestamptz - $6::interval, $6::interval) g(t)
   )
   SELECT b.t AS at,
     (COALESCE(sum(EXTRACT(EPOCH FROM LEAST(iv.e, b.u) - GREATEST(iv.s, b.t)))
        FILTER (WHERE iv.state = 'provisioning'), 0) / $7::numeric)::float8 AS provisioning,
     (COALESCE(sum(EXTRACT(EPOCH FROM LEAST(iv.e, b.u) - GREATEST(iv.s, b.t)))
        FILTER (WHERE iv.state = 'warm'), 0) / $7::numeric)::float8 AS warm,
     (COALESCE(sum(EXTRACT(EPOCH FROM LEAST(iv.e, b.u) - GREATEST(iv.s, b.t)))
        FILTER (WHERE iv.state = 'claimed'), 0) / $7::numeric)::float8 AS claimed
   FROM buckets b LEFT JOIN iv ON iv.s < b.u AND iv.e > b.t
   GROUP BY b.t ORDER BY b.t`,
);

/** The pool's window: claims activated in [from, to). */
type WindowParams = [poolId: string, tenantId: string, from: Date, to: Date];

// The window's claims (the (pool_id, activated_at) index finds them) with their wait and their
// time to first confirmed action, in ms; first_ms is null until the claim has one.
const WINDOW_CLAIMS = `
  SELECT activated_at,
         EXTRACT(EPOCH FROM activated_at - created_at) * 1000 AS wait_ms,
         -- GREATEST skips nulls (GREATEST(0, NULL) is 0): the claims without one stay null.
         CASE WHEN first_confirmed_action_at IS NOT NULL THEN
           GREATEST(0, EXTRACT(EPOCH FROM first_confirmed_action_at - created_at) * 1000) END
           AS first_ms
  FROM claims
  WHERE pool_id = $1 AND tenant_id = $2
    AND activated_at >= $3::timestamptz AND activated_at < $4::timestamptz`;

/**
 * Claims activated in the window, how many waited (created → activated), the wait p50/p99, and
 * of those the ones that reached a confirmed action with its p50/p99 (created → first
 * confirmed action). Percentiles skip nulls: a claim that has not acted yet is not counted.
 */
export const selectPoolClaimWaits = statement<
  {
    claims: number;
    waited: number;
    p50: number | null;
    p99: number | null;
    first_actions: number;
    first_p50: number | null;
    first_p99: number | null;
  },
  WindowParams
>(
  'cubicle_pool_insight_waits_v2',
  `WITH c AS (${WINDOW_CLAIMS})
   SELECT count(*)::int AS claims,
     count(*) FILTER (WHERE wait_ms > 0)::int AS waited,
     percentile_cont(0.5) WITHIN GROUP (ORDER BY wait_ms) AS p50,
     percentile_cont(0.99) WITHIN GROUP (ORDER BY wait_ms) AS p99,
     count(first_ms)::int AS first_actions,
     percentile_cont(0.5) WITHIN GROUP (ORDER BY first_ms) AS first_p50,
     percentile_cont(0.99) WITHIN GROUP (ORDER BY first_ms) AS first_p99
   FROM c`,
);

/**
 * The same figures per bucket of [from, to) (claims by the bucket they were activated in), every
 * bucket present, so the two latencies chart over time beside the pool's samples.
 */
export const selectPoolLatencySeries = statement<
  {
    at: Date;
    claims: number;
    wait_p50: number | null;
    wait_p99: number | null;
    first_actions: number;
    first_p50: number | null;
    first_p99: number | null;
  },
  [...WindowParams, step: string]
>(
  'cubicle_pool_insight_latency_v1',
  `WITH c AS (${WINDOW_CLAIMS}),
   buckets AS (
     SELECT g.t, g.t + $5::interval AS u
     FROM generate_series($3::timestamptz, $4::timestamptz - $5::interval, $5::interval) g(t)
   )
   SELECT b.t AS at, count(c.activated_at)::int AS claims,
     percentile_cont(0.5) WITHIN GROUP (ORDER BY c.wait_ms) AS wait_p50,
     percentile_cont(0.99) WITHIN GROUP (ORDER BY c.wait_ms) AS wait_p99,
     count(c.first_ms)::int AS first_actions,
     percentile_cont(0.5) WITHIN GROUP (ORDER BY c.first_ms) AS first_p50,
     percentile_cont(0.99) WITHIN GROUP (ORDER BY c.first_ms) AS first_p99
   FROM buckets b LEFT JOIN c ON c.activated_at >= b.t AND c.activated_at < b.u
   GROUP BY b.t ORDER BY b.t`,
);

/** Claims released in the window, by reason (most first). */
export const selectPoolReleases = statement<{ reason: ReleaseReason; count: number }, WindowParams>(
  'cubicle_pool_insight_releases_v1',
  `SELECT release_reason::text AS reason, count(*)::int AS count FROM claims
   WHERE pool_id = $1 AND tenant_id = $2 AND release_reason IS NOT NULL
     AND released_at >= $3::timestamptz AND released_at < $4::timestamptz
   GROUP BY 1 ORDER BY 2 DESC, 1`,
);

/** Sandboxes that failed in the window, by reason (most first). */
export const selectPoolFailures = statement<{ reason: string; count: number }, WindowParams>(
  'cubicle_pool_insight_failures_v1',
  `SELECT COALESCE(failure_reason, 'unknown') AS reason, count(*)::int AS count FROM sandboxes
   WHERE pool_id = $1 AND tenant_id = $2 AND state = 'failed'
     AND ended_at >= $3::timestamptz AND ended_at < $4::timestamptz
   GROUP BY 1 ORDER BY 2 DESC, 1`,
);

/** Seconds the pool's desktops stood warm within the window (up to `now`). */
export const selectPoolWarmSeconds = statement<
  { seconds: number | null },
  [...WindowParams, now: Date]
>(
  'cubicle_pool_insight_warm_v1',
  `SELECT sum(EXTRACT(EPOCH FROM
            COALESCE(LEAST(claimed_at, ended_at), $5::timestamptz) - GREATEST(ready_at, $3::timestamptz)
          ))::float8 AS seconds
   FROM sandboxes
   WHERE pool_id = $1 AND tenant_id = $2 AND ready_at < $4::timestamptz
     AND COALESCE(LEAST(claimed_at, ended_at), $5::timestamptz) > $3::timestamptz`,
);
