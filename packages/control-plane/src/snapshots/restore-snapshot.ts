import type { ArchiveApplyResponse } from '@cubicle/contract/guest';
import type { TenantObjects } from '@cubicle/object-store';
import type { GuestClient, SandboxGuestClient } from '../guest/guest-client.js';
import { chunkSizes, stageToGuest } from '../profiles/chunk-transfer.js';
import { chunkKey, type SnapshotManifest } from './snapshot-objects.js';

const GUEST_CALL_MS = 60_000;

type Guest = GuestClient | SandboxGuestClient;

/** ChunkSource answers a chunk's bytes (opened). */
export type ChunkSource = (hash: string) => Promise<Uint8Array>;

/**
 * sharedChunkSource reads each chunk of a snapshot from the store once and keeps it for
 * every fork of one call: ten forks of a 50 MB snapshot read and open 50 MB, not 500. The
 * promise is kept, so forks asking at once share one read; a failed read is forgotten.
 */
export function sharedChunkSource(objects: TenantObjects, snapshotId: string): ChunkSource {
  const memo = new Map<string, Promise<Uint8Array>>();
  return (hash) => {
    let found = memo.get(hash);
    if (!found) {
      found = objects.get(chunkKey(snapshotId, hash));
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
 * `chunks` and are staged by stageToGuest (binary transfers, several at once).
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
  await stageToGuest(guest, needed, chunkSizes(manifest.entries), chunks, GUEST_CALL_MS);
  return guest.call(
    'archive.apply',
    { paths: manifest.paths, entries: manifest.entries },
    { timeoutMs: GUEST_CALL_MS },
  );
}
