import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { assertKey, assertPrefix, keyConflict } from './keys.js';
import { ObjectStoreError, type ObjectInfo, type ObjectStore } from './types.js';

/**
 * S3StoreConfig: any S3 API (AWS, MinIO, versitygw, R2…). `forcePathStyle` for servers without
 * virtual-host buckets (most self-hosted ones). Credentials are never logged or put in errors.
 */
export interface S3StoreConfig {
  kind: 's3';
  /** e.g. `http://127.0.0.1:7070`; unset: AWS's endpoint for the region. */
  endpoint?: string | undefined;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  forcePathStyle?: boolean | undefined;
  /** Bound of one attempt (connect + answer); default 5 s. */
  attemptTimeoutMs?: number | undefined;
  /** Attempts per call, the first included; default 3 (backoff 100 ms–1 s between). */
  maxAttempts?: number | undefined;
  /** Keys per ListObjectsV2 page (S3's maximum and default: 1,000); small in tests of paging. */
  listPageSize?: number | undefined;
}

const DEFAULT_ATTEMPT_TIMEOUT_MS = 5_000;
const DEFAULT_MAX_ATTEMPTS = 3;
const DELETE_BATCH = 1_000;
/** versitygw's (and MinIO's) answers to a key that is both an object and a directory. */
const CONFLICTS = new Set(['ObjectParentIsFile', 'ExistingObjectIsDirectory']);

const statusOf = (error: unknown): number | undefined =>
  (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;

const isNotFound = (error: unknown) =>
  error instanceof S3ServiceException &&
  (error.name === 'NoSuchKey' || error.name === 'NotFound' || statusOf(error) === 404);

/**
 * unavailable: everything but a missing object (network errors, timeouts, 5xx, and refusals such
 * as bad credentials or a missing bucket) is the store not serving us. The message names the
 * operation and the error's name/status only: SDK messages may echo request details.
 */
function unavailable(what: string, error: unknown): ObjectStoreError {
  const name = error instanceof Error ? error.name : 'Error';
  const status = statusOf(error);
  const code = (error as NodeJS.ErrnoException).code;
  const detail = [name, status && `HTTP ${status}`, code].filter(Boolean).join(', ');
  return new ObjectStoreError(
    'object_store_unavailable',
    `object store (s3) ${what} failed: ${detail}`,
    {
      cause: error,
    },
  );
}

/** createS3Store talks to one bucket; the bucket must exist (the operator makes it). */
export function createS3Store(config: S3StoreConfig): ObjectStore {
  const attemptTimeoutMs = config.attemptTimeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS;
  const maxAttempts = config.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  const client = new S3Client({
    endpoint: config.endpoint,
    region: config.region,
    forcePathStyle: config.forcePathStyle ?? false,
    credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey },
    maxAttempts,
    // Both bounds per attempt: a server that accepts and never answers costs attemptTimeoutMs,
    // not the SDK's default of waiting forever (without throwOnRequestTimeout the SDK only warns
    // and the request runs on until the whole-call deadline).
    requestHandler: {
      connectionTimeout: attemptTimeoutMs,
      requestTimeout: attemptTimeoutMs,
      throwOnRequestTimeout: true,
    },
  });
  const bucket = config.bucket;
  // The whole call, retries and backoff included, ends by this deadline.
  const deadline = () => ({
    abortSignal: AbortSignal.timeout(attemptTimeoutMs * maxAttempts + 2_000),
  });

  async function put(key: string, body: Uint8Array): Promise<void> {
    assertKey(key);
    try {
      // One PUT is atomic on S3: readers see the old object or the new one.
      await client.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: key,
          Body: body,
          ContentLength: body.byteLength,
        }),
        deadline(),
      );
    } catch (error) {
      // File-backed servers refuse an object that would also be a directory (keys.ts).
      if (error instanceof S3ServiceException && CONFLICTS.has(error.name))
        throw keyConflict(key, error.name === 'ObjectParentIsFile' ? 'a parent key' : `${key}/…`);
      throw unavailable(`put ${key}`, error);
    }
  }

  async function get(key: string): Promise<Uint8Array> {
    assertKey(key);
    try {
      const answer = await client.send(
        new GetObjectCommand({ Bucket: bucket, Key: key }),
        deadline(),
      );
      if (!answer.Body) throw new Error('GetObject answered without a body');
      return await answer.Body.transformToByteArray();
    } catch (error) {
      if (isNotFound(error)) throw new ObjectStoreError('object_not_found', `no object ${key}`);
      throw unavailable(`get ${key}`, error);
    }
  }

  async function head(key: string): Promise<ObjectInfo | undefined> {
    assertKey(key);
    try {
      const answer = await client.send(
        new HeadObjectCommand({ Bucket: bucket, Key: key }),
        deadline(),
      );
      return {
        key,
        size: answer.ContentLength ?? 0,
        modifiedAt: answer.LastModified ?? new Date(0),
      };
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw unavailable(`head ${key}`, error);
    }
  }

  async function* list(prefix: string): AsyncIterable<ObjectInfo> {
    assertPrefix(prefix);
    let token: string | undefined;
    do {
      let page;
      try {
        page = await client.send(
          new ListObjectsV2Command({
            Bucket: bucket,
            Prefix: prefix,
            ContinuationToken: token,
            MaxKeys: config.listPageSize,
          }),
          deadline(),
        );
      } catch (error) {
        throw unavailable(`list ${prefix}`, error);
      }
      for (const item of page.Contents ?? []) {
        if (item.Key === undefined) continue;
        yield { key: item.Key, size: item.Size ?? 0, modifiedAt: item.LastModified ?? new Date(0) };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  async function remove(keys: readonly string[]): Promise<void> {
    for (const key of keys) assertKey(key);
    for (let i = 0; i < keys.length; i += DELETE_BATCH) {
      const batch = keys.slice(i, i + DELETE_BATCH);
      let answer;
      try {
        answer = await client.send(
          new DeleteObjectsCommand({
            Bucket: bucket,
            Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
          }),
          deadline(),
        );
      } catch (error) {
        throw unavailable(`delete ${batch.length} object(s)`, error);
      }
      // Absent keys are not errors on S3; anything listed here is a real refusal.
      const failed = (answer.Errors ?? []).filter((e) => e.Code !== 'NoSuchKey');
      if (failed.length > 0) {
        throw new ObjectStoreError(
          'object_store_unavailable',
          `object store (s3) delete refused ${failed.length} object(s): ${failed[0]!.Code ?? 'error'}`,
        );
      }
    }
  }

  return { kind: 's3', put, get, head, list, delete: remove };
}
