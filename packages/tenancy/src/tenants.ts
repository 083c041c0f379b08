import type {
  Tenant as TenantView,
  TenantQuotas,
  UpdateTenantRequest,
} from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { newId, type Db, type Tenant } from '@cubicle/db';

export type { TenantQuotas };

/** tenantView maps a row to the contract's Tenant. */
export function tenantView(row: Tenant): TenantView {
  return {
    id: row.id,
    name: row.name,
    quotas: {
      max_pools: row.maxPools,
      max_sandboxes: row.maxSandboxes,
      max_concurrent_claims: row.maxConcurrentClaims,
      requests_per_minute: row.requestsPerMinute,
    },
    retention: {
      recording_days: row.recordingRetentionDays,
      snapshot_days: row.snapshotRetentionDays,
      profile_days: row.profileRetentionDays,
    },
    embed_origins: row.allowedEmbedOrigins,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export interface CreateTenantInput {
  name: string;
  /** Quotas not given keep the database defaults (20 pools, 100 sandboxes, 100 claims, 6000 rpm). */
  quotas?: Partial<TenantQuotas>;
  allowedEmbedOrigins?: string[];
}

/** createTenant adds a tenant; it has no keys until createApiKey makes one. */
export async function createTenant(db: Db, input: CreateTenantInput): Promise<TenantView> {
  const q = input.quotas ?? {};
  const row = await db.tenant.create({
    data: {
      id: newId('tenant'),
      name: input.name,
      maxPools: q.max_pools,
      maxSandboxes: q.max_sandboxes,
      maxConcurrentClaims: q.max_concurrent_claims,
      requestsPerMinute: q.requests_per_minute,
      allowedEmbedOrigins: input.allowedEmbedOrigins ?? [],
    },
  });
  return tenantView(row);
}

/** listTenants is for operators (the CLI): every tenant, oldest first. */
export async function listTenants(db: Db): Promise<TenantView[]> {
  const rows = await db.tenant.findMany({ orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  return rows.map(tenantView);
}

/** getTenant returns one tenant or throws not_found. */
export async function getTenant(db: Db, tenantId: string): Promise<TenantView> {
  const row = await db.tenant.findUnique({ where: { id: tenantId } });
  if (!row) throw new AppError('not_found', 'tenant not found');
  return tenantView(row);
}

/**
 * updateTenant applies an admin's change: the origins allowed to frame the tenant's viewer pages
 * (validated by the contract's EmbedOrigin; open streams are unaffected, new page loads get the
 * new CSP) and any retention days given. What is left out keeps its value.
 */
export async function updateTenant(
  db: Db,
  tenantId: string,
  change: UpdateTenantRequest,
): Promise<TenantView> {
  const days = change.retention ?? {};
  const { count } = await db.tenant.updateMany({
    where: { id: tenantId },
    data: {
      allowedEmbedOrigins: change.embed_origins,
      recordingRetentionDays: days.recording_days,
      snapshotRetentionDays: days.snapshot_days,
      profileRetentionDays: days.profile_days,
    },
  });
  if (count === 0) throw new AppError('not_found', 'tenant not found');
  return getTenant(db, tenantId);
}
