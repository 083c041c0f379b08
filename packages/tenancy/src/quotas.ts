import { AppError } from '@cubicle/contract/errors';
import { Prisma } from '@cubicle/db';

/** The tenant quotas counted by checkQuota; `requests_per_minute` is the rate limiter's. */
export type QuotaName = 'pools' | 'sandboxes' | 'concurrent_claims';

// What counts against each quota: pools not yet deleted (draining ones still hold resources),
// sandboxes that exist or are being made, claims pending or active.
const usage: Record<QuotaName, { column: string; count: (tenantId: string) => Prisma.Sql }> = {
  pools: {
    column: 'max_pools',
    count: (t) =>
      Prisma.sql`SELECT count(*)::int AS used FROM pools WHERE tenant_id = ${t} AND deleted_at IS NULL`,
  },
  sandboxes: {
    column: 'max_sandboxes',
    count: (t) =>
      Prisma.sql`SELECT count(*)::int AS used FROM sandboxes WHERE tenant_id = ${t} AND state NOT IN ('deleted', 'failed')`,
  },
  concurrent_claims: {
    column: 'max_concurrent_claims',
    count: (t) =>
      Prisma.sql`SELECT count(*)::int AS used FROM claims WHERE tenant_id = ${t} AND status IN ('pending', 'active')`,
  },
};

export interface CheckQuotaOptions {
  /** How many the caller is about to add (default 1). */
  adding?: number;
  /**
   * Lock the tenant row (FOR NO KEY UPDATE) before counting, so two transactions of the same
   * tenant cannot both pass on the last free unit. The lock is held until the caller's
   * transaction ends: keep that transaction short. Default true.
   */
  lock?: boolean;
}

export interface QuotaUsage {
  quota: QuotaName;
  limit: number;
  used: number;
}

/**
 * checkQuota throws AppError('quota_exceeded', …, { quota, limit, used }) when adding `adding`
 * more would pass the tenant's limit; otherwise it returns the usage. Call it inside the
 * transaction that creates the rows (under READ COMMITTED the count runs after the lock, so it
 * sees every committed competitor). An unknown tenant is not_found.
 */
export async function checkQuota(
  tx: Prisma.TransactionClient,
  tenantId: string,
  quota: QuotaName,
  options: CheckQuotaOptions = {},
): Promise<QuotaUsage> {
  const adding = options.adding ?? 1;
  const { column, count } = usage[quota];
  const lock = options.lock === false ? Prisma.empty : Prisma.sql`FOR NO KEY UPDATE`;
  const tenants = await tx.$queryRaw<{ limit: number }[]>`
    SELECT ${Prisma.raw(`"${column}"`)} AS "limit" FROM tenants WHERE id = ${tenantId} ${lock}`;
  const limit = tenants[0]?.limit;
  if (limit === undefined) throw new AppError('not_found', 'tenant not found');
  const [row] = await tx.$queryRaw<{ used: number }[]>(count(tenantId));
  const used = row?.used ?? 0;
  if (used + adding > limit) {
    throw new AppError('quota_exceeded', `the tenant's ${quota} quota (${limit}) is reached`, {
      quota,
      limit,
      used,
    });
  }
  return { quota, limit, used };
}
