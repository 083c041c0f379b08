import { createHash } from 'node:crypto';
import type { ArchiveApplyResponse, ArchiveChunkRef } from '@cubicle/contract/guest';
import { AppError } from '@cubicle/contract/errors';
import type { TenantObjects } from '@cubicle/object-store';
import type { GuestClient, SandboxGuestClient } from '../guest/guest-client.js';
import { hostChunkCache, type CacheScope } from './chunk-cache.js';
import { readFromGuest } from './chunk-transfer.js';
import { HostChunkFiles, hostStageOf, type ChunkSource } from './host-stage.js';
import { stageRestore } from './restore-chunks.js';
import { blobKey, type ProfileManifest } from './profile-objects.js';

type Guest = GuestClient | SandboxGuestClient;

/** One guest call of a transfer: long enough for 8 MiB over a slow link and a busy desktop. */
export const TRANSFER_CALL_MS = 60_000;

/**
 * cacheScopeFor answers where a local desktop's chunks are cached on this machine (the desktop
 * has a host stage here, so its restores link from the cache), or undefined for any other
 * desktop: a Pod's or VM's chunks are not kept in plaintext on the control plane's disk.
 */
export async function cacheScopeFor(
  guest: Guest,
  tenantId: string,
  keyOf: (hash: string) => string,
): Promise<CacheScope | undefined> {
  const stage = 'guest' in guest ? await hostStageOf(guest.guest.endpoint) : null;
  return stage ? { cache: hostChunkCache(), tenantId, keyOf } : undefined;
}

/**
 * checkedChunkSink answers what a save does with each chunk the desktop sends: its bytes are
 * hashed here against the id the desktop gave (a desktop cannot store bytes under another
 * chunk's id: 409 conflict, nothing stored), then stored sealed (`put`) and, for a local desktop,
 * kept in the machine's chunk cache so the next restore links it.
 */
export function checkedChunkSink(
  put: (hash: string, bytes: Uint8Array) => Promise<void>,
  cached: CacheScope | undefined,
) {
  return async (c: { hash: string; bytes: Uint8Array }) => {
    if (createHash('sha256').update(c.bytes).digest('hex') !== c.hash)
      throw new AppError('conflict', `the desktop sent chunk ${c.hash} with other bytes`, {
        hash: c.hash,
      });
    await put(c.hash, c.bytes);
    await cached?.cache.add(cached.tenantId, cached.keyOf(c.hash), c.bytes);
  };
}

/**
 * uploadChunks reads chunks from the desktop (readFromGuest: binary `archive.read` transfers,
 * several at once) and stores each under its content address as it arrives (checkedChunkSink).
 * A chunk stored twice is the same bytes: a retried or repeated upload is harmless. Answers the
 * bytes uploaded.
 */
export async function uploadChunks(
  guest: Guest,
  objects: TenantObjects,
  profileId: string,
  chunks: readonly (ArchiveChunkRef & { size: number })[],
): Promise<number> {
  let uploaded = 0;
  const keyOf = (hash: string) => blobKey(profileId, hash);
  const sink = checkedChunkSink(
    (hash, bytes) => objects.put(keyOf(hash), bytes),
    await cacheScopeFor(guest, objects.tenantId, keyOf),
  );
  await readFromGuest(
    guest,
    chunks,
    async (c) => {
      await sink(c);
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
 * chunk (default: from the store; the claim passes one it started reading early) when the
 * machine's chunk cache does not hold it; host-staged chunks are removed after the apply,
 * whatever its outcome.
 */
export async function restoreHome(
  guest: Guest,
  objects: TenantObjects,
  profileId: string,
  manifest: Pick<ProfileManifest, 'paths' | 'entries'>,
  source: ChunkSource = (hash) => objects.get(blobKey(profileId, hash)),
): Promise<ArchiveApplyResponse> {
  const cached = await cacheScopeFor(guest, objects.tenantId, (hash) => blobKey(profileId, hash));
  const files = new HostChunkFiles(source, cached);
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
