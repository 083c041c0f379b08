import { createFsStore, type FsStoreConfig } from './fs-store.js';
import { createS3Store, type S3StoreConfig } from './s3-store.js';
import type { ObjectStore } from './types.js';

/** ObjectStoreConfig picks the back end: files under a directory, or an S3 bucket. */
export type ObjectStoreConfig = FsStoreConfig | S3StoreConfig;

/** createObjectStore makes the store a config names; it opens no connection until first use. */
export function createObjectStore(config: ObjectStoreConfig): ObjectStore {
  switch (config.kind) {
    case 'fs':
      return createFsStore(config);
    case 's3':
      return createS3Store(config);
    default:
      return config satisfies never;
  }
}
