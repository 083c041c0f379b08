import type {
  PoolHint,
  PoolInsights,
  PoolInsightsQuery,
  PoolSample,
  ReleaseReason,
} from '@cubicle/contract/api';
import { nowOf, type Deps } from '../context.js';
import { findLivePool } from '../pools/apply-pool.js';

/** Sample spacing: one bucket a minute over an hour, every 15 minutes over a day. */
const WINDOWS = {
  hour: { spanMs: 3_600_000, stepMs: 60_000 },
  day: { spanMs: 86_400_000, stepMs: 900_000 },
} as const;

/** A pool whose claims waited this often (share of its claims) should keep more warm. */
const WAITED_SHARE_HINT = 0.1;

/**
 * poolInsights describes a pool's recent past from its facts: average sandbox counts by state
 * per bucket of the window (derived from each sandbox's created/ready/claimed/ended times, so no
 * sampler has to have been running), claim waits (created → activated) p50/p99, releases by
 * reason, failures by reason, and hints on the warm minimum.
 */
export async function poolInsights(
  deps: Deps,
  tenantId: string,
  poolName: string,
  query: PoolInsightsQuery,
): Promise<PoolInsights> {
  const pool = await findLivePool(deps, tenantId, poolName);
  const { spanMs, stepMs } = WINDOWS[query.window];
  // The window ends with the bucket in progress (its average covers the time so far).
  const now = nowOf(deps);
  const to = new Date(Math.floor(now.getTime() / stepMs) * stepMs + stepMs);
  const from = new Date(to.getTime() - spanMs);
  const step = `${stepMs / 1000} seconds`;

  const stepSeconds = stepMs / 1000;
  // Time-weighted: a desktop warm for 20 s of a minute counts 1/3 in that minute's sample, so
  // short states show instead of falling between two instants.
  const samples = await deps.db.$queryRaw<
    { at: Date; provisioning: number; warm: number; claimed: number }[]
  >`
    WITH sb AS (
      SELECT LEAST(created_at, ready_at) AS created_at, ready_at, claimed_at, ended_at
      FROM sandboxes
      WHERE pool_id = ${pool.id} AND tenant_id = ${tenantId}
        AND LEAST(created_at, ready_at) < ${to} AND (ended_at IS NULL OR ended_at > ${from})
    ),
    iv AS (
      SELECT 'provisioning' AS state, created_at AS s, COALESCE(LEAST(ready_at, ended_at), ${now}) AS e
        FROM sb
      UNION ALL
      SELECT 'warm', ready_at, COALESCE(LEAST(claimed_at, ended_at), ${now}) FROM sb
        WHERE ready_at IS NOT NULL
      UNION ALL
      SELECT 'claimed', claimed_at, COALESCE(ended_at, ${now}) FROM sb WHERE claimed_at IS NOT NULL
    ),
    buckets AS (
      SELECT g.t, g.t + ${step}::interval AS u
      FROM generate_series(${from}::timestamptz, ${to}::timestamptz - ${step}::interval, ${step}::interval) g(t)
    )
    SELECT b.t AS at,
      (COALESCE(sum(EXTRACT(EPOCH FROM LEAST(iv.e, b.u) - GREATEST(iv.s, b.t)))
         FILTER (WHERE iv.state = 'provisioning'), 0) / ${stepSeconds})::float8 AS provisioning,
      (COALESCE(sum(EXTRACT(EPOCH FROM LEAST(iv.e, b.u) - GREATEST(iv.s, b.t)))
         FILTER (WHERE iv.state = 'warm'), 0) / ${stepSeconds})::float8 AS warm,
      (COALESCE(sum(EXTRACT(EPOCH FROM LEAST(iv.e, b.u) - GREATEST(iv.s, b.t)))
         FILTER (WHERE iv.state = 'claimed'), 0) / ${stepSeconds})::float8 AS claimed
    FROM buckets b LEFT JOIN iv ON iv.s < b.u AND iv.e > b.t
    GROUP BY b.t ORDER BY b.t`;

  const [waits] = await deps.db.$queryRaw<
    { claims: number; waited: number; p50: number | null; p99: number | null }[]
  >`
    SELECT count(*)::int AS claims,
      count(*) FILTER (WHERE activated_at > created_at)::int AS waited,
      percentile_cont(0.5) WITHIN GROUP (ORDER BY EXTRACT(EPOCH FROM activated_at - created_at) * 1000) AS p50,
      percentile_cont(0.99) WITHIN GROUP (ORDER BY EXTRACT(EPOCH FROM activated_at - created_at) * 1000) AS p99
    FROM claims
    WHERE pool_id = ${pool.id} AND tenant_id = ${tenantId}
      AND activated_at >= ${from} AND activated_at < ${to}`;

  const releases = await deps.db.$queryRaw<{ reason: ReleaseReason; count: number }[]>`
    SELECT release_reason::text AS reason, count(*)::int AS count FROM claims
    WHERE pool_id = ${pool.id} AND tenant_id = ${tenantId} AND release_reason IS NOT NULL
      AND released_at >= ${from} AND released_at < ${to}
    GROUP BY 1 ORDER BY 2 DESC, 1`;

  const failures = await deps.db.$queryRaw<{ reason: string; count: number }[]>`
    SELECT COALESCE(failure_reason, 'unknown') AS reason, count(*)::int AS count FROM sandboxes
    WHERE pool_id = ${pool.id} AND tenant_id = ${tenantId} AND state = 'failed'
      AND ended_at >= ${from} AND ended_at < ${to}
    GROUP BY 1 ORDER BY 2 DESC, 1`;

  const [warm] = await deps.db.$queryRaw<{ seconds: number | null }[]>`
    SELECT sum(EXTRACT(EPOCH FROM
             COALESCE(LEAST(claimed_at, ended_at), ${now}) - GREATEST(ready_at, ${from})
           ))::float8 AS seconds
    FROM sandboxes
    WHERE pool_id = ${pool.id} AND tenant_id = ${tenantId} AND ready_at < ${to}
      AND COALESCE(LEAST(claimed_at, ended_at), ${now}) > ${from}`;

  const stats = waits ?? { claims: 0, waited: 0, p50: null, p99: null };
  const sampleViews: PoolSample[] = samples.map((s) => ({ ...s, at: s.at.toISOString() }));
  return {
    pool: pool.name,
    pool_id: pool.id,
    window: query.window,
    from: from.toISOString(),
    to: to.toISOString(),
    samples: sampleViews,
    claims: stats.claims,
    waited_claims: stats.waited,
    wait_p50_ms: stats.p50 === null ? null : Number(stats.p50),
    wait_p99_ms: stats.p99 === null ? null : Number(stats.p99),
    releases,
    failures,
    warm_seconds: Math.max(0, warm?.seconds ?? 0),
    hints: sizingHints(pool.minSize, stats, sampleViews),
  };
}

/**
 * sizingHints: claims that had to wait for a desktop mean the warm minimum is too low; desktops
 * that stood warm at every sample while no claim waited mean it is higher than needed.
 */
export function sizingHints(
  minSize: number,
  waits: { claims: number; waited: number; p99: number | null },
  samples: Pick<PoolSample, 'warm'>[],
): PoolHint[] {
  const hints: PoolHint[] = [];
  if (waits.waited > 0 && waits.waited >= waits.claims * WAITED_SHARE_HINT) {
    const p99 = waits.p99 === null ? '' : ` (p99 wait ${(waits.p99 / 1000).toFixed(1)} s)`;
    hints.push({
      kind: 'warm_min_too_low',
      message: `${waits.waited} of ${waits.claims} claims waited for a desktop${p99}: raise autoscaling.min above ${minSize}.`,
    });
  }
  // Desktops warm through every bucket of the window (averages, so floor to whole desktops).
  const idle = samples.length > 0 ? Math.floor(Math.min(...samples.map((s) => s.warm))) : 0;
  if (waits.waited === 0 && idle > 0 && minSize > 0) {
    const suggested = Math.max(0, minSize - idle);
    hints.push({
      kind: 'warm_min_too_high',
      message: `${idle} warm desktop${idle === 1 ? '' : 's'} stood idle the whole window and no claim waited: autoscaling.min could be ${suggested} instead of ${minSize}.`,
    });
  }
  return hints;
}
