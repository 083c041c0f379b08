import type { Db } from '@cubicle/db';
import { ObjectStoreError, type TenantDataKeys } from '@cubicle/object-store';
import { openBytes, sealBytes, type Keyring } from '../crypto/keyring.js';
import { freshRandom } from '../crypto/random-pool.js';

/** The aad a data key is wrapped with: a wrapped key copied onto another tenant's row fails to open. */
const wrapAad = (tenantId: string) => `tenant-data-key:${tenantId}`;

/** unwrap opens a stored data key; a keyring without its master key (or a moved row) is object_integrity. */
function unwrap(keyring: Keyring, tenantId: string, wrappedKey: Uint8Array): Uint8Array {
  try {
    return new Uint8Array(openBytes(keyring, wrappedKey, wrapAad(tenantId)));
  } catch (error) {
    throw new ObjectStoreError(
      'object_integrity',
      `the data key of tenant ${tenantId} does not open with this keyring (a master key removed too early?)`,
      { cause: error },
    );
  }
}

/**
 * createTenantDataKeys hands out each tenant's object data key: read from tenant_data_keys and
 * opened with the keyring, or made on first use. Two replicas making one at once both insert
 * with ON CONFLICT DO NOTHING and read back the row that won, so a tenant only ever has one key.
 * Opened keys are cached for the life of this control plane (one row read per tenant); a failed
 * read is not cached, so the next call tries again.
 */
export function createTenantDataKeys(deps: { db: Db; keyring: Keyring }): TenantDataKeys {
  const cache = new Map<string, Promise<Uint8Array>>();

  async function load(tenantId: string): Promise<Uint8Array> {
    const row = await deps.db.tenantDataKey.findUnique({ where: { tenantId } });
    if (row) return unwrap(deps.keyring, tenantId, row.wrappedKey);
    const fresh = freshRandom(32);
    await deps.db.tenantDataKey.createMany({
      data: [
        {
          tenantId,
          wrappedKey: sealBytes(deps.keyring, fresh, wrapAad(tenantId)),
          keyId: deps.keyring.currentKeyId,
        },
      ],
      skipDuplicates: true,
    });
    fresh.fill(0);
    // Whoever won the insert, the row now holds the tenant's one key.
    const won = await deps.db.tenantDataKey.findUniqueOrThrow({ where: { tenantId } });
    return unwrap(deps.keyring, tenantId, won.wrappedKey);
  }

  return {
    dataKey(tenantId) {
      let key = cache.get(tenantId);
      if (!key) {
        key = load(tenantId);
        cache.set(tenantId, key);
        key.catch(() => cache.delete(tenantId));
      }
      return key;
    },
  };
}

/**
 * rewrapTenantDataKeys moves every tenant data key not wrapped by the keyring's current key onto
 * it (`cubicle secrets rewrap` runs it beside the secrets): the data keys themselves, and so
 * every object, stay as they are, and the older master key can then leave CUBICLE_KEYRING.
 * Idempotent; a row whose master key is missing from the keyring fails the run.
 */
export async function rewrapTenantDataKeys(db: Db, keyring: Keyring): Promise<number> {
  const rows = await db.tenantDataKey.findMany({
    where: { keyId: { not: keyring.currentKeyId } },
    select: { tenantId: true, wrappedKey: true, keyId: true },
  });
  for (const row of rows) {
    const key = openBytes(keyring, row.wrappedKey, wrapAad(row.tenantId));
    const wrappedKey = sealBytes(keyring, key, wrapAad(row.tenantId));
    key.fill(0);
    // Only the row as read: a concurrent rewrap (or a newer key) is not overwritten.
    await db.tenantDataKey.updateMany({
      where: { tenantId: row.tenantId, keyId: row.keyId },
      data: { wrappedKey, keyId: keyring.currentKeyId },
    });
  }
  return rows.length;
}
