import type { ArchiveApplyResponse } from '@cubicle/contract/guest';
import type { TenantObjects } from '@cubicle/object-store';
import type { GuestClient, SandboxGuestClient } from '../guest/guest-client.js';
import type { ChunkSource, HostChunkFiles } from '../profiles/host-stage.js';
import { stageRestore } from '../profiles/restore-chunks.js';
import { chunkKey, type SnapshotManifest } from './snapshot-objects.js';

const GUEST_CALL_MS = 60_000;

type Guest = GuestClient | SandboxGuestClient;

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
 * restoreSnapshot makes the desktop's home hold the snapshot's paths: the chunks are staged where
 * the guest finds them (stageRestore: into the desktop's host stage on this machine, written once
 * for every fork of the call and linked after; or `archive.need` then binary `archive.stage`
 * transfers), and `archive.apply` writes the files at once (atomically each, removing under those
 * paths what the snapshot does not have). The caller clears `files` after every fork's apply.
 */
export async function restoreSnapshot(
  guest: Guest,
  files: HostChunkFiles,
  manifest: SnapshotManifest,
): Promise<ArchiveApplyResponse> {
  await stageRestore(guest, manifest.entries, files, GUEST_CALL_MS);
  return guest.call(
    'archive.apply',
    { paths: manifest.paths, entries: manifest.entries },
    { timeoutMs: GUEST_CALL_MS },
  );
}
