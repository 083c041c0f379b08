import { z } from 'zod';
import { named } from '../registry.js';
import { ApiKeyId, TenantId, Timestamp } from './common.js';

export const TenantQuotas = named(
  'TenantQuotas',
  z.strictObject({
    max_pools: z.number().int().min(0).max(10_000),
    max_sandboxes: z.number().int().min(0).max(100_000),
    max_concurrent_claims: z.number().int().min(0).max(100_000),
    requests_per_minute: z.number().int().min(1).max(1_000_000),
  }),
);
export type TenantQuotas = z.infer<typeof TenantQuotas>;

export const Tenant = named(
  'Tenant',
  z.strictObject({
    id: TenantId,
    name: z.string().min(1).max(200),
    quotas: TenantQuotas,
    /** Origins allowed to embed viewer iframes (CSP frame-ancestors). */
    allowed_embed_origins: z.array(z.url()).max(50),
    created_at: Timestamp,
    updated_at: Timestamp,
  }),
);
export type Tenant = z.infer<typeof Tenant>;

export const ApiKeyRole = named('ApiKeyRole', z.enum(['admin', 'member']));
export type ApiKeyRole = z.infer<typeof ApiKeyRole>;

/** ApiKey is how a key is shown after creation: its prefix for recognition, never the secret. */
export const ApiKey = named(
  'ApiKey',
  z.strictObject({
    id: ApiKeyId,
    name: z.string().min(1).max(200),
    role: ApiKeyRole,
    prefix: z.string(),
    created_at: Timestamp,
    last_used_at: Timestamp.nullable(),
    revoked_at: Timestamp.nullable(),
  }),
);
export type ApiKey = z.infer<typeof ApiKey>;

export const CreateApiKeyRequest = named(
  'CreateApiKeyRequest',
  z.strictObject({ name: z.string().min(1).max(200), role: ApiKeyRole.default('member') }),
);
export type CreateApiKeyRequest = z.infer<typeof CreateApiKeyRequest>;

/** ApiKeyCreated carries the full key exactly once, in the creation response. */
export const ApiKeyCreated = named(
  'ApiKeyCreated',
  z.strictObject({ ...ApiKey.shape, key: z.string() }),
);
export type ApiKeyCreated = z.infer<typeof ApiKeyCreated>;
