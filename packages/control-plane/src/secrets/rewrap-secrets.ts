import type { Db } from '@cubicle/db';
import { rewrapEnvelope, secretAad } from '../crypto/envelope.js';
import type { Keyring } from '../crypto/keyring.js';
import { rewrapTenantDataKeys } from '../objects/tenant-data-keys.js';

export interface RewrapResult {
  /** Data keys moved onto the keyring's current key. */
  rewrapped: { claim_secrets: number; tenant_secrets: number; tenant_data_keys: number };
  /** The key every data key is now wrapped by. */
  key_id: string;
}

const BATCH = 500;

/**
 * rewrapSecrets re-wraps every stored data key that is not on the keyring's current key (claim
 * secrets, every version of stored secrets, and the object store's tenant data keys); the values' ciphertexts are untouched. After it,
 * older keys can leave CUBICLE_KEYRING. Idempotent; rows already on the current key are skipped.
 * A row whose key is missing from the keyring fails the run with that key's id.
 */
export async function rewrapSecrets(db: Db, keyring: Keyring): Promise<RewrapResult> {
  const current = keyring.currentKeyId;
  let claimCount = 0;
  for (;;) {
    const rows = await db.claimSecret.findMany({
      where: { keyId: { not: current } },
      select: { id: true, tenantId: true, name: true, wrappedKey: true },
      take: BATCH,
    });
    if (rows.length === 0) break;
    for (const r of rows) {
      const moved = rewrapEnvelope(keyring, r.wrappedKey, secretAad(r.tenantId, r.name));
      await db.claimSecret.update({
        where: { id: r.id },
        data: moved ? { wrappedKey: moved.wrappedKey, keyId: moved.keyId } : { keyId: current },
      });
      claimCount++;
    }
  }
  let storedCount = 0;
  for (;;) {
    const rows = await db.tenantSecret.findMany({
      where: { keyId: { not: current } },
      select: { id: true, tenantId: true, name: true, wrappedKey: true },
      take: BATCH,
    });
    if (rows.length === 0) break;
    for (const r of rows) {
      const moved = rewrapEnvelope(keyring, r.wrappedKey, secretAad(r.tenantId, r.name));
      await db.tenantSecret.update({
        where: { id: r.id },
        data: moved ? { wrappedKey: moved.wrappedKey, keyId: moved.keyId } : { keyId: current },
      });
      storedCount++;
    }
  }
  // The object store's tenant data keys are wrapped by the same keyring.
  const dataKeyCount = await rewrapTenantDataKeys(db, keyring);
  return {
    rewrapped: {
      claim_secrets: claimCount,
      tenant_secrets: storedCount,
      tenant_data_keys: dataKeyCount,
    },
    key_id: current,
  };
}
