import { z } from 'zod';
import { named } from '../registry.js';
import { crossFieldRules } from '../rules.js';
import { PoolId, ResourceName, Timestamp } from './common.js';
import { ReleaseReason } from './claim.js';

/** Longest span one usage query may cover; `group_by=hour` is limited to USAGE_MAX_HOURLY_DAYS. */
export const USAGE_MAX_DAYS = 400;
export const USAGE_MAX_HOURLY_DAYS = 31;

/** UsageGroupBy: one row per pool over the whole span, or per pool and UTC day / hour. */
export const UsageGroupBy = named('UsageGroupBy', z.enum(['pool', 'day', 'hour']));
export type UsageGroupBy = z.infer<typeof UsageGroupBy>;

const Instant = z.iso.datetime({ offset: true });
const DAY_MS = 86_400_000;

/**
 * UsageQuery selects the hours that start in [from, to) (UTC). from < to, the span at most
 * USAGE_MAX_DAYS days (USAGE_MAX_HOURLY_DAYS with group_by=hour).
 */
export const UsageQuery = z
  .strictObject({
    from: Instant,
    to: Instant,
    group_by: UsageGroupBy.default('pool'),
  })
  .superRefine((q, ctx) => {
    const span = Date.parse(q.to) - Date.parse(q.from);
    if (!(span > 0)) ctx.addIssue({ code: 'custom', path: ['to'], message: 'must be after from' });
    const maxDays = q.group_by === 'hour' ? USAGE_MAX_HOURLY_DAYS : USAGE_MAX_DAYS;
    if (span > maxDays * DAY_MS)
      ctx.addIssue({
        code: 'custom',
        path: ['to'],
        message: `the span is at most ${maxDays} days with group_by=${q.group_by}`,
      });
  })
  .meta(
    crossFieldRules(
      `from < to; the span is at most ${USAGE_MAX_DAYS} days (${USAGE_MAX_HOURLY_DAYS} with group_by=hour).`,
      { rule: 'less', left: 'from', right: 'to' },
      { rule: 'max_span_days', from: 'from', to: 'to', days: USAGE_MAX_DAYS },
      {
        rule: 'max_span_days',
        from: 'from',
        to: 'to',
        days: USAGE_MAX_HOURLY_DAYS,
        if: { group_by: 'hour' },
      },
    ),
  );
export type UsageQuery = z.infer<typeof UsageQuery>;

/** UsageTotals are exact sums of interval overlaps (seconds), from facts, never estimates. */
export const UsageTotals = named(
  'UsageTotals',
  z.strictObject({
    /** Claims that became active in the span. */
    claims: z.int().min(0),
    /** Seconds claims held a desktop (activated → released). */
    claim_seconds: z.number().min(0),
    /** Seconds desktops stood ready and unclaimed (ready → claimed or ended). */
    warm_seconds: z.number().min(0),
    /** warm_seconds weighted by the pool's CPU (cores) and memory (GiB). */
    warm_cpu_core_seconds: z.number().min(0),
    warm_memory_gib_seconds: z.number().min(0),
    /** Runs started in the span, and seconds runs were executing (started → finished). */
    runs: z.int().min(0),
    run_seconds: z.number().min(0),
    /**
     * Connections and DNS questions the egress point refused, counted in the hour they happened
     * (the sum of the `count` of the claims' `egress.denied` lines).
     */
    egress_denials: z.int().min(0),
    /**
     * Seconds of `claim_seconds` the claims' desktops were paused (frozen: no CPU); active time
     * is `claim_seconds - paused_seconds`.
     */
    paused_seconds: z.number().min(0),
  }),
);
export type UsageTotals = z.infer<typeof UsageTotals>;

export const UsageRow = named(
  'UsageRow',
  UsageTotals.extend({
    pool_id: PoolId,
    pool: ResourceName,
    /** Start of the UTC day or hour; null with group_by=pool. */
    period_start: Timestamp.nullable(),
  }),
);
export type UsageRow = z.infer<typeof UsageRow>;

export const Usage = named(
  'Usage',
  z.strictObject({
    from: Timestamp,
    to: Timestamp,
    group_by: UsageGroupBy,
    /** The rollup has counted facts up to this time; later usage appears after its next run. */
    rolled_up_to: Timestamp.nullable(),
    rows: z.array(UsageRow),
    totals: UsageTotals,
  }),
);
export type Usage = z.infer<typeof Usage>;

/** PoolInsightsQuery: the window the insights cover, ending now. */
export const PoolInsightsQuery = z.strictObject({
  window: z.enum(['hour', 'day']).default('hour'),
});
export type PoolInsightsQuery = z.infer<typeof PoolInsightsQuery>;

/**
 * PoolSample is a pool's average number of sandboxes in each state over one bucket starting at
 * `at` (time-weighted, from the sandboxes' timestamps: 0.5 warm = one desktop warm half of it).
 */
export const PoolSample = named(
  'PoolSample',
  z.strictObject({
    at: Timestamp,
    provisioning: z.number().min(0),
    warm: z.number().min(0),
    claimed: z.number().min(0),
  }),
);
export type PoolSample = z.infer<typeof PoolSample>;

/**
 * PoolLatencySample: the claims activated in the bucket starting at `at`: how long they waited
 * (created → activated) and, of those that have reached one, their time to first confirmed
 * action (created → first ActionResult with `effect: confirmed`). Percentiles are null for a
 * bucket without such claims.
 */
export const PoolLatencySample = named(
  'PoolLatencySample',
  z.strictObject({
    at: Timestamp,
    claims: z.int().min(0),
    wait_p50_ms: z.number().min(0).nullable(),
    wait_p99_ms: z.number().min(0).nullable(),
    first_actions: z.int().min(0),
    first_action_p50_ms: z.number().min(0).nullable(),
    first_action_p99_ms: z.number().min(0).nullable(),
  }),
);
export type PoolLatencySample = z.infer<typeof PoolLatencySample>;

/** PoolHint: advice on the pool's warm minimum, from what happened in the window. */
export const PoolHint = named(
  'PoolHint',
  z.strictObject({
    kind: z.enum(['warm_min_too_low', 'warm_min_too_high']),
    message: z.string(),
  }),
);
export type PoolHint = z.infer<typeof PoolHint>;

export const PoolInsights = named(
  'PoolInsights',
  z.strictObject({
    pool: ResourceName,
    pool_id: PoolId,
    window: z.enum(['hour', 'day']),
    from: Timestamp,
    to: Timestamp,
    /** Consecutive buckets (a minute each over an hour, 15 minutes each over a day). */
    samples: z.array(PoolSample),
    /** Claims activated in the window: how long they waited pending (created → activated). */
    claims: z.int().min(0),
    waited_claims: z.int().min(0),
    wait_p50_ms: z.number().min(0).nullable(),
    wait_p99_ms: z.number().min(0).nullable(),
    /**
     * Of the claims activated in the window, those that reached a confirmed action, and their
     * time to first confirmed action p50/p99 (created → first `confirmed` ActionResult).
     */
    first_actions: z.int().min(0),
    first_action_p50_ms: z.number().min(0).nullable(),
    first_action_p99_ms: z.number().min(0).nullable(),
    /** Both latencies per bucket (the buckets of `samples`), to chart over time. */
    latency: z.array(PoolLatencySample),
    /** Claims that ended in the window, by reason. */
    releases: z.array(z.strictObject({ reason: ReleaseReason, count: z.int().min(0) })),
    /** Sandboxes that failed in the window, by failure reason. */
    failures: z.array(z.strictObject({ reason: z.string(), count: z.int().min(0) })),
    /** Seconds desktops of the pool stood warm (ready, unclaimed) in the window. */
    warm_seconds: z.number().min(0),
    hints: z.array(PoolHint),
  }),
);
export type PoolInsights = z.infer<typeof PoolInsights>;

/** USAGE_CSV_COLUMNS: the CSV form of usage rows (dashboard download and operator export). */
export const USAGE_CSV_COLUMNS = [
  'tenant_id',
  'pool_id',
  'pool',
  'period_start',
  'claims',
  'claim_seconds',
  'warm_seconds',
  'warm_cpu_core_seconds',
  'warm_memory_gib_seconds',
  'runs',
  'run_seconds',
  'egress_denials',
  'paused_seconds',
] as const;

const csvCell = (value: unknown): string => {
  const text = value === null || value === undefined ? '' : String(value);
  // Quote what CSV needs quoted, and neutralise spreadsheet formulas (=, +, -, @ first).
  const safe = /^[=+\-@]/.test(text) && Number.isNaN(Number(text)) ? `'${text}` : text;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
};

/** usageToCsv renders usage rows as RFC 4180 CSV with a header line; tenant_id may be absent. */
export function usageToCsv(rows: (UsageRow & { tenant_id?: string })[]): string {
  const lines = [USAGE_CSV_COLUMNS.join(',')];
  for (const row of rows) lines.push(USAGE_CSV_COLUMNS.map((c) => csvCell(row[c])).join(','));
  return lines.join('\r\n') + '\r\n';
}
