import type { Db } from '@cubicle/db';
import {
  ObjectStoreError,
  tenantObjects,
  type ObjectStore,
  type TenantObjects,
} from '@cubicle/object-store';
import type { Keyring } from '../crypto/keyring.js';
import { createTenantDataKeys } from './tenant-data-keys.js';

/**
 * ControlPlaneObjects is the object store as services use it (Resources.objects): the raw
 * store for sweeps that work on stored keys, and `forTenant(id)` for one tenant's sealed view,
 * the only way profiles, snapshots and recordings should read or write objects.
 */
export interface ControlPlaneObjects {
  readonly store: ObjectStore;
  forTenant(tenantId: string): TenantObjects;
}

/**
 * An installation without a store (a control plane built without one, e.g. in a test that
 * does not need objects): every call fails with `object_store_unavailable`, saying so.
 */
const NO_STORE: ObjectStore = (() => {
  const fail = (): never => {
    throw new ObjectStoreError(
      'object_store_unavailable',
      'no object store configured for this control plane (createResources without objectStore)',
    );
  };
  return {
    kind: 'fs',
    put: async () => fail(),
    get: async () => fail(),
    head: async () => fail(),
    // eslint-disable-next-line require-yield
    list: async function* () {
      fail();
    },
    delete: async () => fail(),
  };
})();

/** createControlPlaneObjects wraps a store with this control plane's tenant data keys (cached per instance). */
export function createControlPlaneObjects(
  store: ObjectStore | undefined,
  deps: { db: Db; keyring: Keyring },
): ControlPlaneObjects {
  const dataKeys = createTenantDataKeys(deps);
  const actual = store ?? NO_STORE;
  return {
    store: actual,
    forTenant: (tenantId) => tenantObjects(actual, tenantId, { dataKeys }),
  };
}
