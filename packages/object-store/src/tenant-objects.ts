import { assertKey, assertPrefix } from './keys.js';
import { openObject, sealObject } from './seal.js';
import type { ObjectInfo, ObjectStore, TenantObjects } from './types.js';

/**
 * TenantDataKeys hands out each tenant's 32-byte data key (made on first use, the same for
 * every replica). The control plane implements it over its keyring and database
 * (control-plane/src/objects/tenant-data-keys.ts): this package holds no master key.
 */
export interface TenantDataKeys {
  dataKey(tenantId: string): Promise<Uint8Array>;
}

export interface TenantObjectsDeps {
  dataKeys: TenantDataKeys;
}

const TENANT_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** tenantPrefix is where a tenant's objects live in the store: `tenants/<tenantId>/`. */
export const tenantPrefix = (tenantId: string) => `tenants/${tenantId}/`;

/**
 * tenantObjects is one tenant's sealed view of a store: keys are relative to `tenants/<id>/`
 * (a tenant cannot name another's object), every body is sealed under the tenant's data key
 * before it reaches the store and opened after, bound to its tenant and key.
 */
export function tenantObjects(
  store: ObjectStore,
  tenantId: string,
  deps: TenantObjectsDeps,
): TenantObjects {
  if (!TENANT_ID.test(tenantId)) throw new Error(`not a tenant id: ${JSON.stringify(tenantId)}`);
  const prefix = tenantPrefix(tenantId);
  const full = (key: string) => {
    assertKey(key);
    return prefix + key;
  };
  const relative = (info: ObjectInfo): ObjectInfo => ({
    ...info,
    key: info.key.slice(prefix.length),
  });

  async function* list(sub: string): AsyncIterable<ObjectInfo> {
    assertPrefix(sub);
    for await (const info of store.list(prefix + sub)) yield relative(info);
  }

  return {
    tenantId,
    async put(key, body) {
      const stored = full(key);
      const dataKey = await deps.dataKeys.dataKey(tenantId);
      await store.put(stored, sealObject(dataKey, tenantId, key, body));
    },
    async get(key) {
      const stored = full(key);
      const [dataKey, sealed] = await Promise.all([
        deps.dataKeys.dataKey(tenantId),
        store.get(stored),
      ]);
      return openObject(dataKey, tenantId, key, sealed);
    },
    async head(key) {
      const info = await store.head(full(key));
      return info && relative(info);
    },
    list,
    async delete(keys) {
      await store.delete(keys.map(full));
    },
    async deletePrefix(sub) {
      assertPrefix(sub);
      const keys: string[] = [];
      for await (const info of store.list(prefix + sub)) keys.push(info.key);
      await store.delete(keys);
      return keys.length;
    },
  };
}
