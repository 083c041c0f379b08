import type {
  PoolHint,
  PoolInsights,
  PoolInsightsQuery,
  PoolLatencySample,
  PoolSample,
} from '@cubicle/contract/api';
import { sqlOf } from '@cubicle/db';
import { nowOf } from '../context.js';
import type { Deps } from '../resources.js';
import { findLivePool } from '../pools/apply-pool.js';
import {
  selectPoolClaimWaits,
  selectPoolFailures,
  selectPoolLatencySeries,
  selectPoolReleases,
  selectPoolSamples,
  selectPoolWarmSeconds,
} from '../repositories/usage-insights.js';

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
 * sampler has to have been running), claim waits (created → activated) p50/p99 and time to
 * first confirmed action p50/p99, for the window and per bucket, releases by reason, failures
 * by reason, and hints on the warm minimum.
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
  const sql = sqlOf(deps.db);
  const window = [pool.id, tenantId, from, to] as const;
  const samples = await sql.rows(selectPoolSamples, ...window, now, step, stepSeconds);
  const waits = await sql.row(selectPoolClaimWaits, ...window);
  const latency = await sql.rows(selectPoolLatencySeries, ...window, step);
  const releases = await sql.rows(selectPoolReleases, ...window);
  const failures = await sql.rows(selectPoolFailures, ...window);
  const warm = await sql.row(selectPoolWarmSeconds, ...window, now);

  const stats = waits ?? {
    claims: 0,
    waited: 0,
    p50: null,
    p99: null,
    first_actions: 0,
    first_p50: null,
    first_p99: null,
  };
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
    first_actions: stats.first_actions,
    first_action_p50_ms: msOrNull(stats.first_p50),
    first_action_p99_ms: msOrNull(stats.first_p99),
    latency: latency.map((b): PoolLatencySample => ({
      at: b.at.toISOString(),
      claims: b.claims,
      wait_p50_ms: msOrNull(b.wait_p50),
      wait_p99_ms: msOrNull(b.wait_p99),
      first_actions: b.first_actions,
      first_action_p50_ms: msOrNull(b.first_p50),
      first_action_p99_ms: msOrNull(b.first_p99),
    })),
    releases,
    failures,
    warm_seconds: Math.max(0, warm?.seconds ?? 0),
    hints: sizingHints(pool.minSize, stats, sampleViews),
  };
}

/** percentile_cont answers double precision (a number, or null with nothing to rank). */
const msOrNull = (v: number | null) => (v === null ? null : Math.max(0, Number(v)));

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
