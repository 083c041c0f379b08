import type { UsageQuery } from '@cubicle/contract/api';
import { statement, type Statement } from '@cubicle/db';

// Reading `usage_hourly` (what rollupUsage wrote), on node-postgres: one fixed statement per
// grouping and scope, so each keeps its own plan (a tenant's read uses the tenant's index).

/** One group of usage_hourly rows: a pool, and a period unless grouped by pool. */
export interface UsageSumRow {
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
  egress_denials: number;
  paused_seconds: number;
}

type GroupBy = UsageQuery['group_by'];

const PERIOD: Record<GroupBy, string> = {
  pool: 'NULL::timestamptz',
  day: "date_trunc('day', u.hour, 'UTC')",
  hour: 'u.hour',
};

const sumText = (groupBy: GroupBy, where: string) =>
  `SELECT u.tenant_id, u.pool_id, p.name AS pool, ${PERIOD[groupBy]} AS period_start,
          sum(u.claims)::int AS claims, sum(u.claim_seconds) AS claim_seconds,
          sum(u.warm_seconds) AS warm_seconds, sum(u.warm_cpu_core_seconds) AS warm_cpu_core_seconds,
          sum(u.warm_memory_gib_seconds) AS warm_memory_gib_seconds,
          sum(u.run_seconds) AS run_seconds, sum(u.runs)::int AS runs,
          sum(u.egress_denials)::int AS egress_denials, sum(u.paused_seconds) AS paused_seconds
   FROM usage_hourly u JOIN pools p ON p.id = u.pool_id
   WHERE ${where}
   GROUP BY u.tenant_id, u.pool_id, p.name, 4
   ORDER BY u.tenant_id, 4 NULLS FIRST, p.name`;

const byGroup = <P extends readonly unknown[]>(
  scope: string,
  where: string,
): Record<GroupBy, Statement<UsageSumRow, P>> => ({
  pool: statement(`cubicle_usage_sum_${scope}_pool_v3`, sumText('pool', where)),
  day: statement(`cubicle_usage_sum_${scope}_day_v3`, sumText('day', where)),
  hour: statement(`cubicle_usage_sum_${scope}_hour_v3`, sumText('hour', where)),
});

/** A tenant's usage of [from, to), by grouping. */
export const sumTenantUsage = byGroup<[tenantId: string, from: Date, to: Date]>(
  'tenant',
  'u.tenant_id = $1 AND u.hour >= $2::timestamptz AND u.hour < $3::timestamptz',
);

/** Every tenant's usage of [from, to), by grouping (the operator's export). */
export const sumAllUsage = byGroup<[from: Date, to: Date]>(
  'all',
  'u.hour >= $1::timestamptz AND u.hour < $2::timestamptz',
);

/** Up to when usage is rolled up (null before the first rollup). */
export const selectUsageRolledTo = statement<{ rolled_to: Date | null }, []>(
  'cubicle_usage_rolled_to_v1',
  `SELECT rolled_to FROM usage_rollup_state WHERE id = 'usage'`,
);
