import {
  ARCHIVE_CHUNK_BYTES,
  type ArchiveChunkRef,
  type ArchiveEntry,
} from '@cubicle/contract/guest';
import { AppError } from '@cubicle/contract/errors';
import type { TenantObjects } from '@cubicle/object-store';
import type { GuestClient } from '../guest/guest-client.js';
import { readFromGuest } from '../profiles/chunk-transfer.js';
import { cacheScopeFor, checkedChunkSink } from '../profiles/home-transfer.js';
import { chunkKey, putManifest, type SnapshotManifest } from './snapshot-objects.js';

/** One guest call's bound; a 50 MB home is a few seconds of reading on a loaded machine. */
const GUEST_CALL_MS = 60_000;
/** Scans when a file changes between its scan and its read (a browser writing its history). */
const SCAN_ATTEMPTS = 3;

export interface PackedSnapshot {
  manifest: SnapshotManifest;
  /** Bytes of the files packed. */
  sizeBytes: number;
  fileCount: number;
  /** Bytes written to the store (sealed chunks and manifest, before sealing overhead). */
  storedBytes: number;
}

/**
 * homeTopLevel names what the whole home holds, as archive paths: the guest archive takes paths
 * relative to the home and none for "all of it", so the snapshot names each top-level entry.
 * Read with `find -printf` (one NUL-separated line per name), so no name is mangled by a shell.
 */
export async function homeTopLevel(guest: GuestClient): Promise<string[]> {
  const run = await guest.call(
    'shell.run',
    { command: `find "$HOME" -mindepth 1 -maxdepth 1 -printf '%f\\0'`, timeout_ms: 10_000 },
    { timeoutMs: 15_000 },
  );
  if (run.exit_code !== 0)
    throw new AppError('backend_unavailable', 'the guest could not list the home to snapshot');
  const names = run.stdout.split('\0').filter((n) => n !== '' && !n.includes('/'));
  return names.sort().slice(0, 64);
}

/**
 * packSnapshot moves `paths` of the claim's home into the store through the guest archive:
 * `archive.scan` (a manifest with each file's chunk ids), `archive.read` of each distinct chunk in
 * transfers of at most ARCHIVE_TRANSFER_MAX_BYTES, one object per chunk, then the manifest last:
 * a snapshot whose manifest exists has every chunk. A file changed between scan and read
 * (409 conflict) makes it scan again, a few times. Browsers are not asked to quit (the desktop
 * keeps running); their databases are copied as they are on disk.
 */
export async function packSnapshot(
  guest: GuestClient,
  objects: TenantObjects,
  snapshotId: string,
  paths: string[],
): Promise<PackedSnapshot> {
  const stored = new Set<string>();
  let storedBytes = 0;
  for (let attempt = 1; ; attempt++) {
    const scan = await guest.call('archive.scan', { paths }, { timeoutMs: GUEST_CALL_MS });
    const refs = distinctChunks(scan.entries).filter((r) => !stored.has(r.hash));
    try {
      storedBytes += await copyChunks(guest, objects, snapshotId, refs, stored);
    } catch (err) {
      if (err instanceof AppError && err.code === 'conflict' && attempt < SCAN_ATTEMPTS) continue;
      throw err;
    }
    const manifest: SnapshotManifest = { version: 1, paths, entries: scan.entries };
    storedBytes += await putManifest(objects, snapshotId, manifest);
    const files = scan.entries.filter((e) => e.type === 'file');
    return { manifest, sizeBytes: scan.total_bytes, fileCount: files.length, storedBytes };
  }
}

/** Each chunk id once, with the first file and index it was scanned at, and its length. */
function distinctChunks(entries: ArchiveEntry[]): (ArchiveChunkRef & { bytes: number })[] {
  const seen = new Set<string>();
  const refs: (ArchiveChunkRef & { bytes: number })[] = [];
  for (const e of entries) {
    if (e.type !== 'file') continue;
    e.chunks.forEach((hash, index) => {
      if (seen.has(hash)) return;
      seen.add(hash);
      const bytes = Math.min(ARCHIVE_CHUNK_BYTES, e.size - index * ARCHIVE_CHUNK_BYTES);
      refs.push({ path: e.path, index, hash, bytes });
    });
  }
  return refs;
}

/**
 * copyChunks reads chunks from the guest (readFromGuest: binary transfers, several at once) and
 * writes each as an object as it arrives, checked against its id (and kept in the machine's
 * chunk cache for a local desktop: checkedChunkSink).
 */
async function copyChunks(
  guest: GuestClient,
  objects: TenantObjects,
  snapshotId: string,
  refs: (ArchiveChunkRef & { bytes: number })[],
  stored: Set<string>,
): Promise<number> {
  let written = 0;
  const keyOf = (hash: string) => chunkKey(snapshotId, hash);
  const sink = checkedChunkSink(
    (hash, bytes) => objects.put(keyOf(hash), bytes),
    await cacheScopeFor(guest, objects.tenantId, keyOf),
  );
  await readFromGuest(
    guest,
    refs.map((r) => ({ path: r.path, index: r.index, hash: r.hash, size: r.bytes })),
    async (chunk) => {
      await sink(chunk);
      stored.add(chunk.hash);
      written += chunk.bytes.byteLength;
    },
    GUEST_CALL_MS,
  );
  return written;
}
