import type { ArchiveApplyResponse, ArchiveChunkRef } from '@cubicle/contract/guest';
import type { TenantObjects } from '@cubicle/object-store';
import type { GuestClient, SandboxGuestClient } from '../guest/guest-client.js';
import { chunkSizes, readFromGuest, stageToGuest } from './chunk-transfer.js';
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
 * restoreHome makes the desktop's home hold a stored version: `archive.need` names the chunks
 * the home lacks, they are read from the store and staged (stageToGuest: binary transfers,
 * several at once), and `archive.apply` writes the files (each atomically; what the version does
 * not have under its paths is removed).
 */
export async function restoreHome(
  guest: Guest,
  objects: TenantObjects,
  profileId: string,
  manifest: Pick<ProfileManifest, 'paths' | 'entries'>,
): Promise<ArchiveApplyResponse> {
  const { needed } = await guest.call(
    'archive.need',
    { entries: manifest.entries },
    { timeoutMs: TRANSFER_CALL_MS },
  );
  await stageToGuest(
    guest,
    needed,
    chunkSizes(manifest.entries),
    (hash) => objects.get(blobKey(profileId, hash)),
    TRANSFER_CALL_MS,
  );
  return guest.call(
    'archive.apply',
    { paths: manifest.paths, entries: manifest.entries },
    { timeoutMs: TRANSFER_CALL_MS },
  );
}
