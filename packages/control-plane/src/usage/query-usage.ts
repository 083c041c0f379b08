import type { Usage, UsageQuery, UsageRow, UsageTotals } from '@cubicle/contract/api';
import { sqlOf } from '@cubicle/db';
import {
  selectUsageRolledTo,
  sumAllUsage,
  sumTenantUsage,
  type UsageSumRow,
} from '../repositories/usage-query.js';
import type { DbDeps } from '../resources.js';

/** A usage row of the operator export: the tenant's row with its tenant named. */
export interface TenantUsageRow extends UsageRow {
  tenant_id: string;
}

/** sumUsage groups usage_hourly rows of the span (one tenant, or all when tenantId is null). */
async function sumUsage(deps: DbDeps, tenantId: string | null, query: UsageQuery) {
  const from = new Date(query.from);
  const to = new Date(query.to);
  const sql = sqlOf(deps.db);
  const rows =
    tenantId === null
      ? await sql.rows(sumAllUsage[query.group_by], from, to)
      : await sql.rows(sumTenantUsage[query.group_by], tenantId, from, to);
  const state = await sql.row(selectUsageRolledTo);
  return { rows, rolledTo: state?.rolled_to ?? null };
}

function toRow(r: UsageSumRow): TenantUsageRow {
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
    egress_denials: r.egress_denials,
    paused_seconds: r.paused_seconds,
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
    egress_denials: 0,
    paused_seconds: 0,
  };
  for (const r of rows) {
    t.claims += r.claims;
    t.claim_seconds += r.claim_seconds;
    t.warm_seconds += r.warm_seconds;
    t.warm_cpu_core_seconds += r.warm_cpu_core_seconds;
    t.warm_memory_gib_seconds += r.warm_memory_gib_seconds;
    t.run_seconds += r.run_seconds;
    t.runs += r.runs;
    t.egress_denials += r.egress_denials;
    t.paused_seconds += r.paused_seconds;
  }
  return t;
}

/**
 * getUsage is a tenant's rolled-up usage over [from, to), per pool or per pool and UTC day/hour.
 * Only this tenant's rows are read; other tenants' pools never appear.
 */
export async function getUsage(deps: DbDeps, tenantId: string, query: UsageQuery): Promise<Usage> {
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
  deps: DbDeps,
  query: UsageQuery,
): Promise<{ rolledTo: Date | null; rows: TenantUsageRow[] }> {
  const { rows, rolledTo } = await sumUsage(deps, null, query);
  return { rolledTo, rows: rows.map(toRow) };
}
