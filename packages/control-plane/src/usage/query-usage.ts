import type { Usage, UsageQuery, UsageRow, UsageTotals } from '@cubicle/contract/api';
import { Prisma } from '@cubicle/db';
import type { Deps } from '../context.js';

interface SumRow {
  tenant_id: string;
  pool_id: string;
  pool: string;
  period_start: Date | null;
  claims: number;
  claim_seconds: number;
  warm_seconds: number;
  warm_cpu_core_seconds: number;
  warm_memory_gib_seconds: number;
  run_seconds: number;
  runs: number;
}

/** A usage row of the operator export: the tenant's row with its tenant named. */
export interface TenantUsageRow extends UsageRow {
  tenant_id: string;
}

const periodOf = (groupBy: UsageQuery['group_by']) =>
  groupBy === 'pool'
    ? Prisma.sql`NULL::timestamptz`
    : groupBy === 'day'
      ? Prisma.sql`date_trunc('day', u.hour, 'UTC')`
      : Prisma.sql`u.hour`;

/** sumUsage groups usage_hourly rows of the span (one tenant, or all when tenantId is null). */
async function sumUsage(deps: Deps, tenantId: string | null, query: UsageQuery) {
  const period = periodOf(query.group_by);
  const tenant = tenantId === null ? Prisma.sql`TRUE` : Prisma.sql`u.tenant_id = ${tenantId}`;
  const rows = await deps.db.$queryRaw<SumRow[]>`
    SELECT u.tenant_id, u.pool_id, p.name AS pool, ${period} AS period_start,
           sum(u.claims)::int AS claims, sum(u.claim_seconds) AS claim_seconds,
           sum(u.warm_seconds) AS warm_seconds, sum(u.warm_cpu_core_seconds) AS warm_cpu_core_seconds,
           sum(u.warm_memory_gib_seconds) AS warm_memory_gib_seconds,
           sum(u.run_seconds) AS run_seconds, sum(u.runs)::int AS runs
    FROM usage_hourly u JOIN pools p ON p.id = u.pool_id
    WHERE ${tenant} AND u.hour >= ${new Date(query.from)}::timestamptz
      AND u.hour < ${new Date(query.to)}::timestamptz
    GROUP BY u.tenant_id, u.pool_id, p.name, 4
    ORDER BY u.tenant_id, 4 NULLS FIRST, p.name`;
  const [state] = await deps.db.$queryRaw<{ rolled_to: Date | null }[]>`
    SELECT rolled_to FROM usage_rollup_state WHERE id = 'usage'`;
  return { rows, rolledTo: state?.rolled_to ?? null };
}

function toRow(r: SumRow): TenantUsageRow {
  return {
    tenant_id: r.tenant_id,
    pool_id: r.pool_id,
    pool: r.pool,
    period_start: r.period_start ? r.period_start.toISOString() : null,
    claims: r.claims,
    claim_seconds: r.claim_seconds,
    warm_seconds: r.warm_seconds,
    warm_cpu_core_seconds: r.warm_cpu_core_seconds,
    warm_memory_gib_seconds: r.warm_memory_gib_seconds,
    run_seconds: r.run_seconds,
    runs: r.runs,
  };
}

/** totalsOf adds rows up (the totals line of a usage answer or export). */
export function totalsOf(rows: UsageTotals[]): UsageTotals {
  const t: UsageTotals = {
    claims: 0,
    claim_seconds: 0,
    warm_seconds: 0,
    warm_cpu_core_seconds: 0,
    warm_memory_gib_seconds: 0,
    run_seconds: 0,
    runs: 0,
  };
  for (const r of rows) {
    t.claims += r.claims;
    t.claim_seconds += r.claim_seconds;
    t.warm_seconds += r.warm_seconds;
    t.warm_cpu_core_seconds += r.warm_cpu_core_seconds;
    t.warm_memory_gib_seconds += r.warm_memory_gib_seconds;
    t.run_seconds += r.run_seconds;
    t.runs += r.runs;
  }
  return t;
}

/**
 * getUsage is a tenant's rolled-up usage over [from, to), per pool or per pool and UTC day/hour.
 * Only this tenant's rows are read; other tenants' pools never appear.
 */
export async function getUsage(deps: Deps, tenantId: string, query: UsageQuery): Promise<Usage> {
  const { rows, rolledTo } = await sumUsage(deps, tenantId, query);
  const out = rows.map((r) => {
    const { tenant_id: _tenant, ...row } = toRow(r);
    return row;
  });
  return {
    from: new Date(query.from).toISOString(),
    to: new Date(query.to).toISOString(),
    group_by: query.group_by,
    rolled_up_to: rolledTo ? rolledTo.toISOString() : null,
    rows: out,
    totals: totalsOf(out),
  };
}

/** exportUsage is the operator's view: every tenant's rows of the span (CLI `usage export`). */
export async function exportUsage(
  deps: Deps,
  query: UsageQuery,
): Promise<{ rolledTo: Date | null; rows: TenantUsageRow[] }> {
  const { rows, rolledTo } = await sumUsage(deps, null, query);
  return { rolledTo, rows: rows.map(toRow) };
}
