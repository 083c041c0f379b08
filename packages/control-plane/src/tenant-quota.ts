import { AppError } from '@cubicle/contract/errors';
import type { Prisma } from '@cubicle/db';

export type QuotaName = 'max_pools' | 'max_sandboxes' | 'max_concurrent_claims';

/**
 * assertTenantQuota throws quota_exceeded when adding one more would pass the tenant's limit.
 * Call it inside the transaction that adds the resource, after taking a lock that serialises
 * adders of that tenant, so concurrent requests cannot overshoot.
 */
export async function assertTenantQuota(tx: Prisma.TransactionClient, tenantId: string, quota: QuotaName): Promise<void> {
  const tenant = await tx.tenant.findUniqueOrThrow({ where: { id: tenantId } });
  let used: number;
  let limit: number;
  switch (quota) {
    case 'max_pools':
      limit = tenant.maxPools;
      used = await tx.pool.count({ where: { tenantId, deletedAt: null } });
      break;
    case 'max_sandboxes':
      limit = tenant.maxSandboxes;
      used = await tx.sandbox.count({ where: { tenantId, state: { in: ['provisioning', 'warm', 'claimed', 'releasing'] } } });
      break;
    case 'max_concurrent_claims':
      limit = tenant.maxConcurrentClaims;
      used = await tx.claim.count({ where: { tenantId, status: { in: ['pending', 'active'] } } });
      break;
    default:
      quota satisfies never;
      throw new Error('unknown quota');
  }
  if (used >= limit) {
    throw new AppError('quota_exceeded', `tenant quota ${quota} reached (${limit})`, { quota, limit, used });
  }
}
