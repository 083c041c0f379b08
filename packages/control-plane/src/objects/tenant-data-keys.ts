import type { Db } from '@cubicle/db';
import type { TenantDataKeys } from '@cubicle/object-store';
import { openBytes, sealBytes, type Keyring } from '../crypto/keyring.js';
import { freshRandom } from '../crypto/random-pool.js';

/** The aad a data key is wrapped with: a wrapped key copied onto another tenant's row fails to open. */
const wrapAad = (tenantId: string) => `tenant-data-key:${tenantId}`;

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
    if (row) return new Uint8Array(openBytes(deps.keyring, row.wrappedKey, wrapAad(tenantId)));
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
    return new Uint8Array(openBytes(deps.keyring, won.wrappedKey, wrapAad(tenantId)));
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
