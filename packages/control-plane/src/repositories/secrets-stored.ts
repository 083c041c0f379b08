import type { SecretInjection, StoredSecretUsableBy } from '@cubicle/contract/api';
import { statement } from '@cubicle/db';

// The `tenant_secrets` table's raw statements (versions of a tenant's stored secrets), on
// node-postgres. Plain reads and deletes of its rows use the ORM.

/**
 * Writes the next version of a stored secret (the first is 1). `usableBy` null keeps the
 * previous version's setting (`admins` for a first version); `inject` likewise keeps the previous
 * binding when `keepInject` is true, else sets it (JSON or null). Two writers may pick the same
 * version: the unique (tenant, name, version) refuses one, which retries.
 */
export const insertStoredSecretVersion = statement<
  {
    version: number;
    first: Date | null;
    created_at: Date;
    usable_by: StoredSecretUsableBy;
    inject: SecretInjection | null;
    prev_inject: SecretInjection | null;
  },
  [
    tenantId: string,
    name: string,
    id: string,
    ciphertext: Buffer,
    nonce: Buffer,
    wrappedKey: Buffer,
    keyId: string,
    usableBy: StoredSecretUsableBy | null,
    inject: string | null,
    keepInject: boolean,
  ]
>(
  'cubicle_put_stored_secret_v2',
  `WITH prev AS (
     SELECT max(version) AS v, min(created_at) AS first,
            (array_agg(usable_by ORDER BY version DESC))[1] AS usable_by,
            (array_agg(inject ORDER BY version DESC))[1] AS inject
     FROM tenant_secrets WHERE tenant_id = $1 AND name = $2)
   INSERT INTO tenant_secrets (id, tenant_id, name, version, ciphertext, nonce, wrapped_key,
                               key_id, usable_by, inject)
   SELECT $3::text, $1::text, $2::text, coalesce(prev.v, 0) + 1,
          $4::bytea, $5::bytea, $6::bytea, $7::text,
          coalesce($8::text, prev.usable_by, 'admins'),
          CASE WHEN $10::boolean THEN prev.inject ELSE $9::jsonb END
   FROM prev
   RETURNING version, (SELECT first FROM prev) AS first, created_at, usable_by, inject,
             (SELECT inject FROM prev) AS prev_inject`,
);

/** The tenant's stored secrets by name: newest version, first and last write, its setting. */
export const selectStoredSecrets = statement<
  {
    name: string;
    version: number;
    first: Date;
    last: Date;
    usable_by: StoredSecretUsableBy;
    inject: SecretInjection | null;
  },
  [tenantId: string]
>(
  'cubicle_stored_secrets_v2',
  `SELECT name, max(version) AS version, min(created_at) AS first, max(created_at) AS last,
          (array_agg(usable_by ORDER BY version DESC))[1] AS usable_by,
          (array_agg(inject ORDER BY version DESC))[1] AS inject
   FROM tenant_secrets WHERE tenant_id = $1 GROUP BY name ORDER BY name`,
);
