import type { SecretInjection } from '@cubicle/contract/api';
import { statement } from '@cubicle/db';

// Raw statements of credentials injected at egress: a tenant's bound stored secrets (the newest
// version of each name, when that version carries a binding) and the installation's egress CA.

/** The newest version of each of a tenant's stored secrets that is bound to hosts. */
export const selectBoundSecrets = statement<
  {
    name: string;
    version: number;
    inject: SecretInjection;
    ciphertext: Buffer;
    nonce: Buffer;
    wrapped_key: Buffer;
  },
  [tenantId: string]
>(
  'cubicle_egress_bound_secrets_v1',
  `SELECT name, version, inject, ciphertext, nonce, wrapped_key FROM (
     SELECT DISTINCT ON (name) name, version, inject, ciphertext, nonce, wrapped_key
       FROM tenant_secrets WHERE tenant_id = $1
      ORDER BY name, version DESC) newest
    WHERE inject IS NOT NULL
    ORDER BY name`,
);

/** The installation's egress CA row, if one was made. */
export const selectEgressCa = statement<
  { cert_pem: string; key_ciphertext: Buffer; key_nonce: Buffer; wrapped_key: Buffer },
  [id: string]
>(
  'cubicle_egress_ca_v1',
  `SELECT cert_pem, key_ciphertext, key_nonce, wrapped_key FROM egress_cas WHERE id = $1`,
);

/** Stores a new CA unless one exists (two workers starting at once keep the first). */
export const insertEgressCa = statement<
  never,
  [
    id: string,
    certPem: string,
    keyCiphertext: Buffer,
    keyNonce: Buffer,
    wrappedKey: Buffer,
    keyId: string,
  ]
>(
  'cubicle_egress_ca_insert_v1',
  `INSERT INTO egress_cas (id, cert_pem, key_ciphertext, key_nonce, wrapped_key, key_id)
   VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING`,
);
