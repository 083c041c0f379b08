import {
  ARCHIVE_TRANSFER_MAX_BYTES,
  type ArchiveApplyResponse,
  type ArchiveChunkRef,
} from '@cubicle/contract/guest';
import type { TenantObjects } from '@cubicle/object-store';
import type { GuestClient, SandboxGuestClient } from '../guest/guest-client.js';
import { blobKey, mapLimit, type ProfileManifest } from './profile-objects.js';

type Guest = GuestClient | SandboxGuestClient;

/** One guest call of a transfer: long enough for 8 MiB over a slow link and a busy desktop. */
export const TRANSFER_CALL_MS = 60_000;
const PUT_CONCURRENCY = 8;
const GET_CONCURRENCY = 8;
/** archive.stage takes at most this many blobs per call. */
const STAGE_MAX_BLOBS = 64;

/**
 * uploadChunks reads chunks from the desktop (`archive.read`, batches of at most
 * ARCHIVE_TRANSFER_MAX_BYTES; the guest may answer fewer, the rest is asked again) and stores
 * each under its content address. A chunk stored twice is the same bytes: a retried or
 * repeated upload is harmless. Answers the bytes uploaded.
 */
export async function uploadChunks(
  guest: Guest,
  objects: TenantObjects,
  profileId: string,
  chunks: readonly (ArchiveChunkRef & { size: number })[],
): Promise<number> {
  let uploaded = 0;
  let at = 0;
  while (at < chunks.length) {
    const batch: ArchiveChunkRef[] = [];
    let bytes = 0;
    for (let i = at; i < chunks.length && batch.length < 128; i++) {
      const c = chunks[i]!;
      if (batch.length > 0 && bytes + c.size > ARCHIVE_TRANSFER_MAX_BYTES) break;
      batch.push({ path: c.path, index: c.index, hash: c.hash });
      bytes += c.size;
    }
    const { blobs } = await guest.call(
      'archive.read',
      { chunks: batch },
      { timeoutMs: TRANSFER_CALL_MS },
    );
    await mapLimit(blobs, PUT_CONCURRENCY, async (b) => {
      const body = Buffer.from(b.data, 'base64');
      await objects.put(blobKey(profileId, b.hash), body);
      uploaded += body.length;
    });
    at += Math.max(1, blobs.length);
  }
  return uploaded;
}

/**
 * restoreHome makes the desktop's home hold a stored version: `archive.need` names the chunks
 * the home lacks, they are read from the store a few at a time and staged (each batch while the
 * next is read), and `archive.apply` writes the files (each atomically; what the version does
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
  let batch: { hash: string; data: string }[] = [];
  let bytes = 0;
  let staging: Promise<unknown> = Promise.resolve();
  const flush = async () => {
    if (batch.length === 0) return;
    const blobs = batch;
    batch = [];
    bytes = 0;
    await staging;
    staging = guest.call('archive.stage', { blobs }, { timeoutMs: TRANSFER_CALL_MS });
    staging.catch(() => undefined); // awaited below; a failure surfaces there
  };
  for (let at = 0; at < needed.length; at += GET_CONCURRENCY * 2) {
    const group = needed.slice(at, at + GET_CONCURRENCY * 2);
    const bodies = await mapLimit(group, GET_CONCURRENCY, (hash) =>
      objects.get(blobKey(profileId, hash)),
    );
    for (const [i, body] of bodies.entries()) {
      if (
        batch.length >= STAGE_MAX_BLOBS ||
        (batch.length > 0 && bytes + body.byteLength > ARCHIVE_TRANSFER_MAX_BYTES)
      )
        await flush();
      batch.push({ hash: group[i]!, data: Buffer.from(body).toString('base64') });
      bytes += body.byteLength;
    }
  }
  await flush();
  await staging;
  return guest.call(
    'archive.apply',
    { paths: manifest.paths, entries: manifest.entries },
    { timeoutMs: TRANSFER_CALL_MS },
  );
}
