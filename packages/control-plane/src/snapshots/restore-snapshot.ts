import { ARCHIVE_TRANSFER_MAX_BYTES, type ArchiveApplyResponse } from '@cubicle/contract/guest';
import type { TenantObjects } from '@cubicle/object-store';
import type { GuestClient, SandboxGuestClient } from '../guest/guest-client.js';
import { chunkKey, mapLimit, type SnapshotManifest } from './snapshot-objects.js';

const GUEST_CALL_MS = 60_000;
/** Object reads in flight at once (each at most one chunk). */
const GET_CONCURRENCY = 8;
/** archive.stage takes at most this many blobs per call. */
const STAGE_MAX_BLOBS = 64;

type Guest = GuestClient | SandboxGuestClient;

/** ChunkSource answers a chunk's bytes in base64 (as archive.stage takes them). */
export type ChunkSource = (hash: string) => Promise<string>;

/**
 * sharedChunkSource reads each chunk of a snapshot from the store once and keeps it (base64) for
 * every fork of one call: ten forks of a 50 MB snapshot read and open 50 MB, not 500. The
 * promise is kept, so forks asking at once share one read; a failed read is forgotten.
 */
export function sharedChunkSource(objects: TenantObjects, snapshotId: string): ChunkSource {
  const memo = new Map<string, Promise<string>>();
  return (hash) => {
    let found = memo.get(hash);
    if (!found) {
      found = objects
        .get(chunkKey(snapshotId, hash))
        .then((body) =>
          Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('base64'),
        );
      found.catch(() => memo.delete(hash));
      memo.set(hash, found);
    }
    return found;
  };
}

/**
 * restoreSnapshot makes the desktop's home hold the snapshot's paths: `archive.need` says which
 * chunks the home lacks (a fork of a fresh desktop: all of them), they are read from the store
 * and staged in transfers the guest accepts, and `archive.apply` writes the files at once
 * (atomically each, removing under those paths what the snapshot does not have). Chunks come from
 * `chunks` a few at a time, and each transfer is staged while the next is read.
 */
export async function restoreSnapshot(
  guest: Guest,
  chunks: ChunkSource,
  manifest: SnapshotManifest,
): Promise<ArchiveApplyResponse> {
  const { needed } = await guest.call(
    'archive.need',
    { entries: manifest.entries },
    { timeoutMs: GUEST_CALL_MS },
  );
  let batch: { hash: string; data: string }[] = [];
  let bytes = 0;
  let staging: Promise<unknown> = Promise.resolve();
  const flush = async () => {
    if (batch.length === 0) return;
    const blobs = batch;
    batch = [];
    bytes = 0;
    await staging;
    staging = guest.call('archive.stage', { blobs }, { timeoutMs: GUEST_CALL_MS });
    staging.catch(() => undefined);
  };
  // Chunks come from the store in groups; each group's blobs are staged while the next is read.
  for (let at = 0; at < needed.length; at += GET_CONCURRENCY * 2) {
    const group = needed.slice(at, at + GET_CONCURRENCY * 2);
    const bodies = await mapLimit(group, GET_CONCURRENCY, (hash) => chunks(hash));
    for (const [i, data] of bodies.entries()) {
      const size = (data.length / 4) * 3;
      if (
        batch.length >= STAGE_MAX_BLOBS ||
        (batch.length > 0 && bytes + size > ARCHIVE_TRANSFER_MAX_BYTES)
      )
        await flush();
      batch.push({ hash: group[i]!, data });
      bytes += size;
    }
  }
  await flush();
  await staging;
  return guest.call(
    'archive.apply',
    { paths: manifest.paths, entries: manifest.entries },
    { timeoutMs: GUEST_CALL_MS },
  );
}
