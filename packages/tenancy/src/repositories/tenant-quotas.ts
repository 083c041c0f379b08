// The tenant quotas repository: a tenant's limit and what counts against it, read inside the
// caller's ORM transaction (checkQuota runs where the rows are created).
import { sqlOf, statement, type Prisma, type Statement } from '@cubicle/db';

/** The tenant quotas checkQuota counts; `requests_per_minute` is the rate limiter's. */
export type QuotaName = 'pools' | 'sandboxes' | 'concurrent_claims';

type LimitStatement = Statement<{ limit: number }, [tenantId: string]>;
type UsedStatement = Statement<{ used: number }, [tenantId: string]>;

/** The limit of one quota, read as is or with the tenant row locked (FOR NO KEY UPDATE). */
const limitOf = (
  quota: QuotaName,
  column: string,
): { plain: LimitStatement; locked: LimitStatement } => ({
  plain: statement(
    `cubicle_quota_limit_${quota}_v1`,
    `SELECT "${column}" AS "limit" FROM tenants WHERE id = $1`,
  ),
  locked: statement(
    `cubicle_quota_limit_${quota}_locked_v1`,
    `SELECT "${column}" AS "limit" FROM tenants WHERE id = $1 FOR NO KEY UPDATE`,
  ),
});

// What counts against each quota: pools not yet deleted (draining ones still hold resources),
// sandboxes that exist or are being made, claims pending or active.
const QUOTAS: Record<QuotaName, { limit: ReturnType<typeof limitOf>; used: UsedStatement }> = {
  pools: {
    limit: limitOf('pools', 'max_pools'),
    used: statement(
      'cubicle_quota_used_pools_v1',
      'SELECT count(*)::int AS used FROM pools WHERE tenant_id = $1 AND deleted_at IS NULL',
    ),
  },
  sandboxes: {
    limit: limitOf('sandboxes', 'max_sandboxes'),
    used: statement(
      'cubicle_quota_used_sandboxes_v1',
      "SELECT count(*)::int AS used FROM sandboxes WHERE tenant_id = $1 AND state NOT IN ('deleted', 'failed')",
    ),
  },
  concurrent_claims: {
    limit: limitOf('concurrent_claims', 'max_concurrent_claims'),
    used: statement(
      'cubicle_quota_used_concurrent_claims_v1',
      "SELECT count(*)::int AS used FROM claims WHERE tenant_id = $1 AND status IN ('pending', 'active')",
    ),
  },
};

/**
 * quotaLimit reads the tenant's limit for `quota`, locking the tenant row until `tx` ends when
 * `lock` is set; undefined for an unknown tenant.
 */
export async function quotaLimit(
  tx: Prisma.TransactionClient,
  tenantId: string,
  quota: QuotaName,
  lock: boolean,
): Promise<number | undefined> {
  const { limit } = QUOTAS[quota];
  return (await sqlOf(tx).row(lock ? limit.locked : limit.plain, tenantId))?.limit;
}

/** quotaUsed counts what the tenant holds against `quota`. */
export async function quotaUsed(
  tx: Prisma.TransactionClient,
  tenantId: string,
  quota: QuotaName,
): Promise<number> {
  return (await sqlOf(tx).row(QUOTAS[quota].used, tenantId))?.used ?? 0;
}
