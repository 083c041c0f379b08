import { AppError } from '@cubicle/contract/errors';
import type { Prisma } from '@cubicle/db';
import { quotaLimit, quotaUsed, type QuotaName } from './repositories/tenant-quotas.js';

export type { QuotaName } from './repositories/tenant-quotas.js';

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
  const limit = await quotaLimit(tx, tenantId, quota, options.lock !== false);
  if (limit === undefined) throw new AppError('not_found', 'tenant not found');
  const used = await quotaUsed(tx, tenantId, quota);
  if (used + adding > limit) {
    throw new AppError('quota_exceeded', `the tenant's ${quota} quota (${limit}) is reached`, {
      quota,
      limit,
      used,
    });
  }
  return { quota, limit, used };
}
