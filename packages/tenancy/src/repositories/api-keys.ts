// The API keys repository: the statements of the key verifier's hot path. Named: each connection
// plans them once. Plain SQL: the lookup runs for every key the cache does not hold, and the
// ORM's per-query CPU is several times the round trip.
import type { ApiKeyRole } from '@cubicle/contract/api';
import { sqlOf, statement, type Db } from '@cubicle/db';

/** A key found by its hash, with its tenant's request rate. */
export interface ApiKeyLookupRow {
  id: string;
  tenant_id: string;
  role: ApiKeyRole;
  prefix: string;
  revoked_at: Date | null;
  last_used_at: Date | null;
  requests_per_minute: number;
}

const apiKeyLookup = statement<ApiKeyLookupRow, [hash: string]>(
  'cubicle_api_key_lookup_v1',
  `SELECT k.id, k.tenant_id, k.role, k.prefix, k.revoked_at, k.last_used_at, t.requests_per_minute
         FROM api_keys k JOIN tenants t ON t.id = k.tenant_id WHERE k.hash = $1`,
);

const apiKeyTouch = statement<never, [apiKeyId: string, now: Date, touchedBefore: Date]>(
  'cubicle_api_key_touch_v1',
  `UPDATE api_keys SET last_used_at = $2
         WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $3)`,
);

/** apiKeyByHash reads the key whose SHA-256 hash is `hash` (unique), revoked or not. */
export function apiKeyByHash(db: Db, hash: string): Promise<ApiKeyLookupRow | undefined> {
  return sqlOf(db).row(apiKeyLookup, hash);
}

/**
 * touchApiKey sets a key's last_used_at to `now` unless it was set since `touchedBefore`: the
 * bound holds across replicas, each writing at most once per interval.
 */
export async function touchApiKey(
  db: Db,
  apiKeyId: string,
  now: Date,
  touchedBefore: Date,
): Promise<void> {
  await sqlOf(db).exec(apiKeyTouch, apiKeyId, now, touchedBefore);
}
