import { ArchiveEntry, HomePath } from '@cubicle/contract/guest';
import type { TenantObjects } from '@cubicle/object-store';
import { z } from 'zod';

// Where a snapshot lives in its tenant's sealed view of the object store:
//   snapshots/<id>/manifest      the archive manifest (JSON), written last
//   snapshots/<id>/c/<sha256>    one object per distinct chunk (at most ARCHIVE_CHUNK_BYTES)
// Everything of one snapshot is under one prefix, so deleting it is one deletePrefix and two
// snapshots never share an object (no reference counts to keep right across deletes).

/** The prefix of all of one snapshot's objects. */
export const snapshotPrefix = (snapshotId: string) => `snapshots/${snapshotId}/`;
export const manifestKey = (snapshotId: string) => `${snapshotPrefix(snapshotId)}manifest`;
export const chunkKey = (snapshotId: string, hash: string) =>
  `${snapshotPrefix(snapshotId)}c/${hash}`;

/** SnapshotManifest is what a restore needs: the home paths packed and every entry under them. */
export const SnapshotManifest = z.strictObject({
  version: z.literal(1),
  paths: z.array(HomePath).min(1).max(64),
  entries: z.array(ArchiveEntry),
});
export type SnapshotManifest = z.infer<typeof SnapshotManifest>;

export async function putManifest(
  objects: TenantObjects,
  snapshotId: string,
  manifest: SnapshotManifest,
): Promise<number> {
  const body = new TextEncoder().encode(JSON.stringify(manifest));
  await objects.put(manifestKey(snapshotId), body);
  return body.byteLength;
}

/** readManifest reads and checks a snapshot's manifest; a malformed one is never restored. */
export async function readManifest(
  objects: TenantObjects,
  snapshotId: string,
): Promise<SnapshotManifest> {
  const body = await objects.get(manifestKey(snapshotId));
  return SnapshotManifest.parse(JSON.parse(new TextDecoder().decode(body)));
}

/**
 * mapLimit runs `fn` over `items` with at most `limit` in flight, answering results in order;
 * the first failure rejects (the others already started run to their end, unobserved).
 */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  });
  await Promise.all(workers);
  return out;
}
