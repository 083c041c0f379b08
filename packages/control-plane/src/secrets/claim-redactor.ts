import type { Db } from '@cubicle/db';
import { sqlOf } from '@cubicle/db';
import { openEnvelope, secretAad } from '../crypto/envelope.js';
import type { Keyring } from '../crypto/keyring.js';
import { selectClaimSecretsForRedaction } from '../repositories/secrets-claim.js';
import { createRedactor, type NamedSecret, type Redactor } from './redact.js';

/**
 * openClaimSecrets decrypts every secret a claim holds now (its own and the stored ones attached
 * to it). One named query; values live only in the returned array.
 */
export async function openClaimSecrets(
  deps: { db: Db; keyring: Keyring },
  tenantId: string,
  claimId: string,
): Promise<NamedSecret[]> {
  const rows = await sqlOf(deps.db).rows(selectClaimSecretsForRedaction, claimId, tenantId);
  return rows.map((r) => ({
    name: r.name,
    value: openEnvelope(
      deps.keyring,
      { ciphertext: r.ciphertext, nonce: r.nonce, wrappedKey: r.wrapped_key },
      secretAad(tenantId, r.name),
    ),
  }));
}

/**
 * claimRedactor builds the redactor of a claim's current secrets, for what is stored about the
 * claim (ActionRecords): a value the agent typed or the desktop echoed is kept as
 * `[secret:NAME]`. A claim without secrets gets the identity redactor.
 */
export async function claimRedactor(
  deps: { db: Db; keyring: Keyring },
  tenantId: string,
  claimId: string,
): Promise<Redactor> {
  return createRedactor(await openClaimSecrets(deps, tenantId, claimId));
}
