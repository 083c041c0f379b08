/**
 * The object store interface every stateful feature (profiles, snapshots, recordings) codes
 * against. Two layers:
 *
 * - `ObjectStore` moves opaque bytes (files under `.cubicle/objects` or an S3 bucket). It never
 *   sees plaintext: callers go through `TenantObjects`.
 * - `TenantObjects` is one tenant's view: keys are relative to the tenant's prefix (a tenant
 *   cannot name another's object), and every body is sealed under the tenant's data key before
 *   `put` and opened after `get`.
 *
 * Objects are whole values of bounded size (callers chunk large things, e.g. a profile into
 * content-addressed blobs, a recording into segments), which keeps sealing simple (one AES-GCM
 * value per object) and makes every write atomic: a reader sees the whole object or none.
 *
 * Keys follow one rule on both back ends (keys.ts: relative `/`-separated segments, no `..`, no
 * segment starting with `.`, ASCII letters, digits and `._-=+,@:`). A key that names an object is
 * never also the "directory" of other keys (`a/b` and `a/b/c` together): file-backed S3 servers
 * (versitygw's posix back end, MinIO) refuse the second, and so does the fs store
 * (`object_key_invalid`), so key schemes end objects in leaves (`profiles/<id>/manifest`,
 * `profiles/<id>/blobs/<hash>`).
 */

export interface ObjectInfo {
  /** Key relative to the store (ObjectStore) or to the tenant's prefix (TenantObjects). */
  key: string;
  /** Stored size in bytes (ciphertext for sealed objects). */
  size: number;
  modifiedAt: Date;
}

export interface ObjectStore {
  readonly kind: 'fs' | 's3';
  /** Writes atomically (temp file + rename, or one S3 PUT); overwrites. */
  put(key: string, body: Uint8Array): Promise<void>;
  /** Throws ObjectStoreError `object_not_found` when absent. */
  get(key: string): Promise<Uint8Array>;
  head(key: string): Promise<ObjectInfo | undefined>;
  /** Every object whose key starts with prefix, in key order. */
  list(prefix: string): AsyncIterable<ObjectInfo>;
  /** Deletes the keys that exist; absent keys are not an error. */
  delete(keys: readonly string[]): Promise<void>;
}

export interface TenantObjects {
  readonly tenantId: string;
  put(key: string, body: Uint8Array): Promise<void>;
  get(key: string): Promise<Uint8Array>;
  head(key: string): Promise<ObjectInfo | undefined>;
  list(prefix: string): AsyncIterable<ObjectInfo>;
  delete(keys: readonly string[]): Promise<void>;
  /** Deletes everything under prefix; returns how many objects went. */
  deletePrefix(prefix: string): Promise<number>;
}

/**
 * Store failures carry a stable code the API maps to its error envelope:
 * `object_not_found` (404 where a user named it), `object_store_unavailable` (503: the store did
 * not answer or refused; nothing was half-written), `object_integrity` (a sealed object failed
 * to open: tampered, or sealed under a key this keyring no longer has), `object_key_invalid`
 * (a caller's key or prefix breaks the key rule of keys.ts: `..`, an absolute path, a character
 * outside the set; a programming error, never the store's).
 */
export type ObjectStoreErrorCode =
  'object_not_found' | 'object_store_unavailable' | 'object_integrity' | 'object_key_invalid';

export class ObjectStoreError extends Error {
  constructor(
    readonly code: ObjectStoreErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ObjectStoreError';
  }
}
