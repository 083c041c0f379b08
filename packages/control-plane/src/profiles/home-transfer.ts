import type { ArchiveApplyResponse, ArchiveChunkRef } from '@cubicle/contract/guest';
import type { TenantObjects } from '@cubicle/object-store';
import type { GuestClient, SandboxGuestClient } from '../guest/guest-client.js';
import { readFromGuest } from './chunk-transfer.js';
import { HostChunkFiles, type ChunkSource } from './host-stage.js';
import { stageRestore } from './restore-chunks.js';
import { blobKey, type ProfileManifest } from './profile-objects.js';

type Guest = GuestClient | SandboxGuestClient;

/** One guest call of a transfer: long enough for 8 MiB over a slow link and a busy desktop. */
export const TRANSFER_CALL_MS = 60_000;

/**
 * uploadChunks reads chunks from the desktop (readFromGuest: binary `archive.read` transfers,
 * several at once) and stores each under its content address as it arrives. A chunk stored twice is the same bytes: a retried or
 * repeated upload is harmless. Answers the bytes uploaded.
 */
export async function uploadChunks(
  guest: Guest,
  objects: TenantObjects,
  profileId: string,
  chunks: readonly (ArchiveChunkRef & { size: number })[],
): Promise<number> {
  let uploaded = 0;
  await readFromGuest(
    guest,
    chunks,
    async (c) => {
      await objects.put(blobKey(profileId, c.hash), c.bytes);
      uploaded += c.bytes.byteLength;
    },
    TRANSFER_CALL_MS,
  );
  return uploaded;
}

/**
 * restoreHome makes the desktop's home hold a stored version: its chunks are staged where the
 * guest finds them (stageRestore: written into the desktop's host stage on this machine, or
 * `archive.need` then binary `archive.stage` transfers), and `archive.apply` writes the files
 * (each atomically; what the version does not have under its paths is removed). `source` reads a
 * chunk (default: from the store; the claim passes one it started reading early); host-staged
 * chunks are removed after the apply, whatever its outcome.
 */
export async function restoreHome(
  guest: Guest,
  objects: TenantObjects,
  profileId: string,
  manifest: Pick<ProfileManifest, 'paths' | 'entries'>,
  source: ChunkSource = (hash) => objects.get(blobKey(profileId, hash)),
): Promise<ArchiveApplyResponse> {
  const files = new HostChunkFiles(source);
  try {
    await stageRestore(guest, manifest.entries, files, TRANSFER_CALL_MS);
    return await guest.call(
      'archive.apply',
      { paths: manifest.paths, entries: manifest.entries },
      { timeoutMs: TRANSFER_CALL_MS },
    );
  } finally {
    await files.clear();
  }
}
