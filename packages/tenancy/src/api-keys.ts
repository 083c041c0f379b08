import type {
  ApiKey as ApiKeyView,
  ApiKeyCreated,
  ApiKeyRole,
  ListQuery,
} from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { newId, type ApiKey, type Db } from '@cubicle/db';
import { generateApiKey } from './api-key-secret.js';
import { decodeCursor, keysetAfter, page } from './cursor.js';

const API_KEY_ID = /^key_[0-9a-hjkmnp-tv-z]{26}$/;

/** apiKeyView maps a row to the contract's ApiKey: the prefix, never the hash. */
export function apiKeyView(row: ApiKey): ApiKeyView {
  return {
    id: row.id,
    name: row.name,
    role: row.role,
    prefix: row.prefix,
    created_at: row.createdAt.toISOString(),
    last_used_at: row.lastUsedAt?.toISOString() ?? null,
    revoked_at: row.revokedAt?.toISOString() ?? null,
  };
}

export interface CreateApiKeyInput {
  tenantId: string;
  name: string;
  role: ApiKeyRole;
}

/**
 * createApiKey stores a new key's hash and prefix and returns the full key in `key`: the only
 * time it exists outside its owner's hands. An unknown tenant is not_found.
 */
export async function createApiKey(db: Db, input: CreateApiKeyInput): Promise<ApiKeyCreated> {
  const generated = generateApiKey();
  const tenant = await db.tenant.findUnique({
    where: { id: input.tenantId },
    select: { id: true },
  });
  if (!tenant) throw new AppError('not_found', 'tenant not found');
  const row = await db.apiKey.create({
    data: {
      id: newId('api_key'),
      tenantId: input.tenantId,
      name: input.name,
      role: input.role,
      prefix: generated.prefix,
      hash: generated.hash,
    },
  });
  return { ...apiKeyView(row), key: generated.key };
}

/** listApiKeys pages through a tenant's keys, oldest first, revoked ones included. */
export async function listApiKeys(db: Db, tenantId: string, query: ListQuery) {
  const after = query.cursor ? decodeCursor(query.cursor, API_KEY_ID) : undefined;
  const rows = await db.apiKey.findMany({
    where: { tenantId, ...(after ? keysetAfter(after) : {}) },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    take: query.limit + 1,
  });
  return page(rows, query.limit, apiKeyView);
}

/**
 * revokeApiKey revokes one of the tenant's keys; it is idempotent (revoking twice keeps the
 * first time). Another tenant's key id is not_found, exactly like an unknown one.
 */
export async function revokeApiKey(db: Db, tenantId: string, keyId: string): Promise<ApiKeyView> {
  const revokedAt = new Date();
  const { count } = await db.apiKey.updateMany({
    where: { id: keyId, tenantId, revokedAt: null },
    data: { revokedAt },
  });
  const row = await db.apiKey.findFirst({ where: { id: keyId, tenantId } });
  if (!row) throw new AppError('not_found', 'api key not found');
  if (count === 0 && !row.revokedAt) throw new Error(`api key ${keyId} was not revoked`);
  return apiKeyView(row);
}

/** revokeApiKeyAsOperator is the CLI's revoke: any tenant's key, by id. */
export async function revokeApiKeyAsOperator(db: Db, keyId: string): Promise<ApiKeyView> {
  const row = await db.apiKey.findUnique({ where: { id: keyId }, select: { tenantId: true } });
  if (!row) throw new AppError('not_found', 'api key not found');
  return revokeApiKey(db, row.tenantId, keyId);
}
