import {
  ARCHIVE_CHUNK_BYTES,
  ARCHIVE_STAGE_MAX_BLOBS,
  ARCHIVE_TRANSFER_MAX_BYTES,
  type ArchiveChunkRef,
  type ArchiveEntry,
} from '@cubicle/contract/guest';
import type { ChunkBytes, GuestClient, SandboxGuestClient } from '../guest/guest-client.js';
import { mapLimit } from './profile-objects.js';

type Guest = GuestClient | SandboxGuestClient;

/**
 * Guest transfers in flight at once. Each is at most ARCHIVE_TRANSFER_MAX_BYTES, so this bounds
 * the memory a transfer holds (4 × 8 MiB) while the guest hashes one, the wire carries another
 * and the store writes or reads a third.
 */
export const TRANSFER_CONCURRENCY = 4;
/** Object reads or writes in flight per transfer (each at most one chunk). */
const OBJECT_CONCURRENCY = 4;
/** archive.read refs per call: the contract's bound (a chunk is at least 64 KiB of its budget). */
const READ_MAX_REFS = ARCHIVE_TRANSFER_MAX_BYTES / (64 * 1024);

/**
 * batchesOf splits items, in order, into transfers of at most ARCHIVE_TRANSFER_MAX_BYTES and
 * `maxItems` (one item alone is always a batch).
 */
export function batchesOf<T>(items: readonly T[], sizeOf: (t: T) => number, maxItems: number) {
  const batches: T[][] = [];
  let batch: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = sizeOf(item);
    if (
      batch.length > 0 &&
      (batch.length >= maxItems || bytes + size > ARCHIVE_TRANSFER_MAX_BYTES)
    ) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(item);
    bytes += size;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

/** chunkSizes answers each chunk's length from the manifest (the last of a file is shorter). */
export function chunkSizes(entries: readonly ArchiveEntry[]): Map<string, number> {
  const sizes = new Map<string, number>();
  for (const e of entries)
    if (e.type === 'file')
      e.chunks.forEach((h, i) =>
        sizes.set(h, Math.min(ARCHIVE_CHUNK_BYTES, e.size - i * ARCHIVE_CHUNK_BYTES)),
      );
  return sizes;
}

/**
 * readFromGuest reads chunks from the desktop (`archive.read`, binary form) in transfers of at
 * most ARCHIVE_TRANSFER_MAX_BYTES, TRANSFER_CONCURRENCY at once, and hands each chunk to
 * `store` as it arrives. A transfer the guest answers in part is asked again for the rest.
 */
export async function readFromGuest(
  guest: Guest,
  refs: readonly (ArchiveChunkRef & { size: number })[],
  store: (chunk: ChunkBytes) => Promise<void>,
  timeoutMs: number,
): Promise<void> {
  const batches = batchesOf(refs, (r) => r.size, READ_MAX_REFS);
  await mapLimit(batches, TRANSFER_CONCURRENCY, async (batch) => {
    let rest = batch.map(({ path, index, hash }) => ({ path, index, hash }));
    while (rest.length > 0) {
      const chunks = await guest.readChunks(rest, { timeoutMs });
      await mapLimit(chunks, OBJECT_CONCURRENCY, store);
      rest = rest.slice(chunks.length);
    }
  });
}

/**
 * stageToGuest stages chunks on the desktop (`archive.stage`, binary form) ahead of an apply:
 * transfers of at most ARCHIVE_TRANSFER_MAX_BYTES and ARCHIVE_STAGE_MAX_BLOBS chunks, sized by
 * `sizes` (the manifest's), TRANSFER_CONCURRENCY at once, each one's chunks read from `source`
 * a few at a time just before it is sent.
 */
export async function stageToGuest(
  guest: Guest,
  hashes: readonly string[],
  sizes: ReadonlyMap<string, number>,
  source: (hash: string) => Promise<Uint8Array>,
  timeoutMs: number,
): Promise<void> {
  const batches = batchesOf(
    hashes,
    (h) => sizes.get(h) ?? ARCHIVE_CHUNK_BYTES,
    ARCHIVE_STAGE_MAX_BLOBS,
  );
  await mapLimit(batches, TRANSFER_CONCURRENCY, async (batch) => {
    const blobs = await mapLimit(batch, OBJECT_CONCURRENCY, async (hash) => ({
      hash,
      bytes: await source(hash),
    }));
    await guest.stageChunks(blobs, { timeoutMs });
  });
}
