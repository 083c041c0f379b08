import { sqlPoolOf, type Db } from '@cubicle/db';

export interface InsertClaimInput {
  claimId: string;
  tenantId: string;
  /** The pool by name; the statement reads it (live, current generation) itself. */
  poolName: string;
  name: string;
  metadata: Record<string, string>;
  /** The requested TTL; null takes the pool's. Capped at the pool's maximum lifetime. */
  ttlSeconds: number | null;
  now: Date;
  /** With a key, the key row is written by the same statement (a duplicate key aborts it all). */
  idempotency?: { rowId: string; key: string; scope: string; requestHash: string; expiresAt: Date };
}

/** The claim and (when one was free) the sandbox rows as the statement wrote them (snake_case). */
export interface InsertedClaim {
  /** False when the tenant has no live pool of that name (nothing was written). */
  poolFound: boolean;
  poolId: string | null;
  quotaOk: boolean;
  limit: number;
  used: number;
  claim: Record<string, unknown> | null;
  sandbox: Record<string, unknown> | null;
}

/**
 * insertClaim is the claim hot path as ONE statement (one round trip, one implicit transaction),
 * sent on the plain node-postgres pool (the ORM's per-query CPU is most of a claim's cost):
 * find the tenant's live pool by name, check the tenant's concurrent-claims quota, take the oldest warm sandbox of the pool's current
 * generation (SKIP LOCKED: concurrent claims never wait on each other), insert the claim (active
 * with it, or pending without), and record the idempotency key with the outcome. Any unique
 * violation (a live name taken, a key already used) aborts the whole statement, sandbox included.
 * The quota count is not locked, so simultaneous claims at the quota's edge may pass together.
 */
export async function insertClaim(db: Db, i: InsertClaimInput): Promise<InsertedClaim> {
  const idem = i.idempotency;
  const { rows } = await sqlPoolOf(db).query<{
    pool_id: string | null;
    quota_ok: boolean;
    lim: number;
    used: number;
    claim: Record<string, unknown> | null;
    sandbox: Record<string, unknown> | null;
  }>({
    // Named: each connection parses and plans the statement once, then only binds and runs it.
    name: 'cubicle_insert_claim_v1',
    text: INSERT_CLAIM_SQL,
    values: [
      i.now,
      i.ttlSeconds,
      i.tenantId,
      i.poolName,
      i.claimId,
      i.name,
      JSON.stringify(i.metadata),
      idem?.rowId ?? null,
      idem?.key ?? null,
      idem?.scope ?? null,
      idem?.requestHash ?? null,
      idem?.expiresAt ?? i.now,
      idem !== undefined,
    ],
  });
  const row = rows[0]!;
  return {
    poolFound: row.pool_id !== null,
    poolId: row.pool_id,
    quotaOk: row.quota_ok,
    limit: row.lim,
    used: row.used,
    claim: row.claim,
    sandbox: row.sandbox,
  };
}

// $1 now, $2 ttl or null, $3 tenant, $4 pool name, $5 claim id, $6 claim name, $7 metadata
// (json text), $8-$12 idempotency row id, key, scope, request hash, expiry, $13 has a key.
const INSERT_CLAIM_SQL = `
    WITH pool AS (
      SELECT id, generation, idle_timeout_seconds,
             COALESCE($2::int, claim_ttl_seconds) AS ttl,
             $1::timestamptz + make_interval(secs => max_claim_lifetime_seconds) AS max_expires_at
      FROM pools WHERE tenant_id = $3 AND name = $4 AND deleted_at IS NULL
    ), quota AS (
      SELECT t.max_concurrent_claims AS lim,
             (SELECT count(*)::int FROM claims c WHERE c.tenant_id = t.id AND c.status IN ('pending', 'active')) AS used
      FROM tenants t WHERE t.id = $3
    ), picked AS (
      SELECT s.id FROM sandboxes s
      WHERE (SELECT used < lim FROM quota)
        AND s.pool_id = (SELECT id FROM pool) AND s.state = 'warm' AND s.generation = (SELECT generation FROM pool)
      ORDER BY s.created_at LIMIT 1 FOR UPDATE OF s SKIP LOCKED
    ), taken AS (
      UPDATE sandboxes s SET state = 'claimed', claimed_at = $1, updated_at = $1
      FROM picked WHERE s.id = picked.id AND s.state = 'warm'
      RETURNING s.*
    ), inserted AS (
      INSERT INTO claims (id, tenant_id, pool_id, sandbox_id, name, status, metadata, ttl_seconds,
                          idle_timeout_seconds, expires_at, max_expires_at, last_heartbeat_at, created_at, updated_at)
      SELECT $5, $3, pool.id, (SELECT id FROM taken), $6,
             CASE WHEN EXISTS (SELECT 1 FROM taken) THEN 'active'::claim_status ELSE 'pending'::claim_status END,
             $7::jsonb, pool.ttl, pool.idle_timeout_seconds,
             LEAST($1::timestamptz + make_interval(secs => pool.ttl), pool.max_expires_at), pool.max_expires_at,
             $1, $1, $1
      FROM quota, pool WHERE quota.used < quota.lim
      RETURNING *
    ), idem AS (
      INSERT INTO idempotency_keys (id, tenant_id, key, scope, request_hash, response_status, resource_id, created_at, completed_at, expires_at)
      SELECT $8::text, $3, $9::text, $10::text, $11::text,
             CASE WHEN inserted.status = 'active' THEN 201 ELSE 202 END, inserted.id, $1, $1, $12::timestamptz
      FROM inserted WHERE $13::boolean
      RETURNING id
    )
    SELECT (SELECT id FROM pool) AS pool_id,
           COALESCE((SELECT used < lim FROM quota), false) AS quota_ok,
           COALESCE((SELECT lim FROM quota), 0) AS lim,
           COALESCE((SELECT used FROM quota), 0) AS used,
           (SELECT row_to_json(inserted) FROM inserted) AS claim,
           (SELECT row_to_json(taken) FROM taken) AS sandbox,
           (SELECT count(*) FROM idem) AS idem_rows`;
