import { statement } from '@cubicle/db';

// The `claim_secrets` table's statements: a claim's own secrets, sealed (crypto/envelope). All
// run on node-postgres (the pool, or the connection holding a delivery's lock), so bytea
// columns come back as Buffers. Parameters that only a SELECT list types are cast: node-postgres
// sends them untyped.

/** A sealed value as stored: what openEnvelope needs, besides the tenant and the name. */
export interface SealedSecretRow {
  name: string;
  ciphertext: Buffer;
  nonce: Buffer;
  wrapped_key: Buffer;
}

/**
 * Serialises the deliveries of one claim's secrets (held to the end of the transaction: from
 * reading the rows to the guest's answer).
 */
export const lockClaimSecrets = statement<unknown, [claimId: string]>(
  'cubicle_lock_claim_secrets_v1',
  "SELECT pg_advisory_xact_lock(hashtextextended('claim_secrets:' || $1, 0))",
);

/** The claim's secrets in name order, as a delivery writes them. */
export const selectClaimSecretsToSync = statement<
  SealedSecretRow,
  [claimId: string, tenantId: string]
>(
  'cubicle_secrets_sync_rows_v1',
  `SELECT name, ciphertext, nonce, wrapped_key FROM claim_secrets
   WHERE claim_id = $1 AND tenant_id = $2 ORDER BY name`,
);

/** The claim's secrets, for the redaction of what is stored about it. */
export const selectClaimSecretsForRedaction = statement<
  SealedSecretRow,
  [claimId: string, tenantId: string]
>(
  'cubicle_claim_secrets_for_redaction_v1',
  'SELECT name, ciphertext, nonce, wrapped_key FROM claim_secrets WHERE claim_id = $1 AND tenant_id = $2',
);

/** The live claim holding a sandbox, if it has secrets (liveness: cubicle_claim_is_live). */
export const selectClaimWithSecretsOfSandbox = statement<
  { id: string; tenant_id: string },
  [sandboxId: string, now: Date]
>(
  'cubicle_claim_with_secrets_of_sandbox_v2',
  `SELECT c.id, c.tenant_id FROM claims c
   WHERE c.sandbox_id = $1 AND cubicle_claim_is_live(c.status, c.expires_at, $2)
     AND EXISTS (SELECT 1 FROM claim_secrets cs WHERE cs.claim_id = c.id)`,
);

/** What a name resolves to for a claim's run; `usable_by` is null for a claim's own secret. */
export interface ResolvedSecretRow extends SealedSecretRow {
  usable_by: string | null;
}

/**
 * The one rule for what names mean to a claim's run: the claim's own secret of that name, else
 * the tenant's stored secret of that name (its newest version); one row per name that resolves.
 */
export const resolveSecretNamesStatement = statement<
  ResolvedSecretRow,
  [tenantId: string, claimId: string, names: string[]]
>(
  'cubicle_resolve_secret_names_v2',
  `SELECT DISTINCT ON (name) name, ciphertext, nonce, wrapped_key, usable_by FROM (
     SELECT name, ciphertext, nonce, wrapped_key, NULL::text AS usable_by, 0 AS source,
            0 AS version
     FROM claim_secrets WHERE tenant_id = $1 AND claim_id = $2 AND name = ANY($3)
     UNION ALL
     SELECT name, ciphertext, nonce, wrapped_key, usable_by, 1 AS source, version
     FROM tenant_secrets WHERE tenant_id = $1 AND name = ANY($3)
   ) s ORDER BY name, source, version DESC`,
);

/**
 * addClaimSecret's insert: one row, only while the claim is live, holding the claim's row (FOR
 * SHARE) against a release (the release's trigger deletes the claim's secrets; a row inserted
 * after it would outlive the claim). No row back: the claim is not live; `inserted` false: the
 * name was taken.
 */
export const insertClaimSecret = statement<
  { id: string; name: string; created_at: Date; inserted: boolean },
  [
    claimId: string,
    tenantId: string,
    now: Date,
    id: string,
    name: string,
    ciphertext: Buffer,
    nonce: Buffer,
    wrappedKey: Buffer,
    keyId: string,
  ]
>(
  'cubicle_insert_claim_secret_v1',
  `WITH live AS (
     SELECT id FROM claims WHERE id = $1 AND tenant_id = $2
       AND cubicle_claim_is_live(status, expires_at, $3::timestamptz) FOR SHARE),
   ins AS (
     INSERT INTO claim_secrets (id, tenant_id, claim_id, name, ciphertext, nonce, wrapped_key, key_id)
     SELECT $4::text, $2::text, live.id, $5::text, $6::bytea, $7::bytea, $8::bytea, $9::text
       FROM live
     ON CONFLICT (claim_id, name) DO NOTHING
     RETURNING id, name, created_at)
   SELECT ins.id, ins.name, ins.created_at, true AS inserted FROM ins
   UNION ALL SELECT NULL, NULL, NULL, false FROM live WHERE NOT EXISTS (SELECT 1 FROM ins)`,
);
