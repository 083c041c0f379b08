export * from './types.js';
export { createObjectStore, type ObjectStoreConfig } from './create-object-store.js';
export { createFsStore, type FsStoreConfig } from './fs-store.js';
export { createS3Store, type S3StoreConfig } from './s3-store.js';
export { assertKey, assertPrefix, isKeyInvalid, MAX_KEY_LENGTH } from './keys.js';
export { openObject, sealObject, SEAL_OVERHEAD } from './seal.js';
export {
  tenantObjects,
  tenantPrefix,
  type TenantDataKeys,
  type TenantObjectsDeps,
} from './tenant-objects.js';
