import { z } from 'zod';
import { named } from '../registry.js';
import { text } from '../text.js';
import { ApiKeyId, PORT_PATTERN as PORT, TenantId, Timestamp } from './common.js';

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

/**
 * TenantRetention: how many days the tenant's stored state is kept — a recording after its claim
 * ended, a snapshot after it was taken, a profile after its last use (no claim holding it). The
 * worker's sweeps delete what is older, objects first. A recording's and a snapshot's deadline is
 * fixed when it ends or is taken, so a change applies to those that come after it; a profile is
 * judged against the days in force at each sweep.
 */
export const TenantRetention = named(
  'TenantRetention',
  z.strictObject({
    recording_days: z.number().int().min(1).max(3650),
    snapshot_days: z.number().int().min(1).max(3650),
    profile_days: z.number().int().min(1).max(3650),
  }),
);
export type TenantRetention = z.infer<typeof TenantRetention>;

export const Tenant = named(
  'Tenant',
  z.strictObject({
    id: TenantId,
    name: z.string().min(1).max(200),
    quotas: TenantQuotas,
    retention: TenantRetention,
    /** Origins allowed to embed viewer iframes (CSP frame-ancestors). */
    embed_origins: z.array(z.string()).max(50),
    created_at: Timestamp,
    updated_at: Timestamp,
  }),
);
export type Tenant = z.infer<typeof Tenant>;

/**
 * EmbedOrigin is one origin allowed to frame the viewer (a CSP `frame-ancestors` source):
 * `https://host[:port]` (a leading `*.` allows subdomains), or plain http only for loopback
 * development (`http://localhost[:port]`, `http://127.0.0.1[:port]`). Lowercase, no path.
 */
export const EmbedOrigin = named(
  'EmbedOrigin',
  z
    .string()
    .max(253)
    .regex(
      new RegExp(
        `^(https://(\\*\\.)?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*|http://(localhost|127\\.0\\.0\\.1))(:${PORT})?$`,
      ),
      'an origin like https://app.example.com[:port] or http://localhost[:port], lowercase, no path, port 1–65535',
    ),
);
export type EmbedOrigin = z.infer<typeof EmbedOrigin>;

/**
 * UpdateTenantRequest is what a tenant's admin may change about it; a field left out keeps its
 * value (retention too: only the days given change).
 */
export const UpdateTenantRequest = named(
  'UpdateTenantRequest',
  z.strictObject({
    embed_origins: z
      .array(EmbedOrigin)
      .max(50)
      .refine((list) => new Set(list).size === list.length, 'origins must be unique')
      .meta({ uniqueItems: true })
      .optional(),
    retention: TenantRetention.partial().optional(),
  }),
);
export type UpdateTenantRequest = z.infer<typeof UpdateTenantRequest>;

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
  z.strictObject({ name: text().min(1).max(200), role: ApiKeyRole.default('member') }),
);
export type CreateApiKeyRequest = z.infer<typeof CreateApiKeyRequest>;

/** ApiKeyCreated carries the full key exactly once, in the creation response. */
export const ApiKeyCreated = named(
  'ApiKeyCreated',
  z.strictObject({ ...ApiKey.shape, key: z.string() }),
);
export type ApiKeyCreated = z.infer<typeof ApiKeyCreated>;
