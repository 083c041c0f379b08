import { z } from 'zod';
import { named } from '../registry.js';

/**
 * The guest archive: how a set of paths under the desktop user's home is described, moved out
 * and put back in bounded, content-addressed pieces. Persistent profiles and snapshots both use
 * it. The flow, all over the guest protocol:
 *
 * - save: `archive.scan` (a manifest; unchanged files reuse the previous manifest's hashes
 *   without being read) → the caller diffs it against what the store holds (diffManifests) →
 *   `archive.read` the chunks the store lacks (≤ ARCHIVE_TRANSFER_MAX_BYTES per call).
 * - restore: `archive.need` (which chunks the home does not already hold) → `archive.stage`
 *   them (≤ ARCHIVE_TRANSFER_MAX_BYTES per call) → `archive.apply` the manifest (writes files,
 *   modes and mtimes, removes what the manifest no longer has under its paths).
 *
 * A chunk is at most ARCHIVE_CHUNK_BYTES of one file; its id is the SHA-256 of its bytes, so
 * equal content is stored once across versions, profiles' files and snapshots.
 */

/** Bytes of one chunk (the last chunk of a file is shorter). */
export const ARCHIVE_CHUNK_BYTES = 4 * 1024 * 1024;
/** Raw bytes one `archive.read` answer or `archive.stage` request carries at most (base64 is 4/3 of it). */
export const ARCHIVE_TRANSFER_MAX_BYTES = 8 * 1024 * 1024;
/** Entries one manifest may hold. */
export const ARCHIVE_MAX_ENTRIES = 100_000;

/**
 * A local sandbox's host stage: the directory of this name beside the directory of its guest
 * socket (`<session>/sock/guest.sock` → `<session>/stage`), bound read-only into the sandbox. A
 * control plane on the same machine (it reaches the guest through that socket) may write a
 * restore's chunks there, each named by its id, instead of `archive.stage`-ing them: `archive.need`
 * and `archive.apply` find them there. Only the host can write it.
 */
export const ARCHIVE_HOST_STAGE_NAME = 'stage';

/**
 * Names never archived, wherever they are: browsers' single-instance locks and sockets
 * (Chromium's Singleton*, Firefox's lock/.parentlock) would make a restored browser believe
 * another copy runs; caches are large and rebuilt. Sockets, FIFOs and devices are never
 * archived whatever their name.
 */
export const ARCHIVE_DEFAULT_EXCLUDES = [
  'SingletonLock',
  'SingletonSocket',
  'SingletonCookie',
  'lock',
  '.parentlock',
  'parent.lock',
  'Cache',
  'Code Cache',
  'GPUCache',
  'DawnCache',
  'DawnGraphiteCache',
  'DawnWebGPUCache',
  'GrShaderCache',
  'GraphiteDawnCache',
  'ShaderCache',
  'cache2',
  'Crashpad',
  'crashes',
  'minidumps',
  '.cubicle-archive',
] as const;

/** Sha256 is a chunk's id: 64 lowercase hex digits. */
export const Sha256 = named('GuestSha256', z.string().regex(/^[0-9a-f]{64}$/, 'sha256 hex'));
export type Sha256 = z.infer<typeof Sha256>;

/**
 * HomePath is a path relative to the desktop user's home (`Documents/a.txt`, `.config/chromium`):
 * no leading `/`, no `.` or `..` component, no empty component, no NUL.
 */
export const HomePath = named(
  'GuestHomePath',
  z
    .string()
    .min(1)
    .max(4096)
    .refine(
      (p) =>
        !p.startsWith('/') &&
        !p.includes('\0') &&
        p.split('/').every((part) => part !== '' && part !== '.' && part !== '..'),
      'a path relative to the home, without "." or ".." components',
    ),
);
export type HomePath = z.infer<typeof HomePath>;

/** ExcludeName is one file or directory name (not a path) skipped wherever it appears. */
const ExcludeName = z
  .string()
  .min(1)
  .max(255)
  .refine((n) => !n.includes('/') && !n.includes('\0'), 'a name, not a path');

/**
 * ArchiveEntry is one path of a manifest. Files carry their whole-content hash and the ids of
 * their chunks in order (an empty file has none); symlinks their target as written (restored
 * only when it stays inside the home); directories nothing more. `mode` is the permission bits.
 */
export const ArchiveEntry = named(
  'GuestArchiveEntry',
  z.discriminatedUnion('type', [
    z.strictObject({
      type: z.literal('file'),
      path: HomePath,
      mode: z.int().min(0).max(0o7777),
      size: z.int().min(0),
      mtime_ms: z.number().min(0),
      hash: Sha256,
      chunks: z.array(Sha256),
    }),
    z.strictObject({
      type: z.literal('directory'),
      path: HomePath,
      mode: z.int().min(0).max(0o7777),
      mtime_ms: z.number().min(0),
    }),
    z.strictObject({
      type: z.literal('symlink'),
      path: HomePath,
      target: z.string().min(1).max(4096),
      mtime_ms: z.number().min(0),
    }),
  ]),
);
export type ArchiveEntry = z.infer<typeof ArchiveEntry>;

const Entries = z.array(ArchiveEntry).max(ARCHIVE_MAX_ENTRIES);
const Paths = z.array(HomePath).min(1).max(64);
const Excludes = z
  .array(ExcludeName)
  .max(256)
  .default([...ARCHIVE_DEFAULT_EXCLUDES]);

/**
 * ArchiveScanRequest describes `paths` (missing ones are simply absent from the manifest).
 * `previous` is the last manifest of the same paths: a file whose size, mtime and mode are
 * unchanged keeps its hashes without being read (rsync's quick check). `quiesce` first asks the
 * browsers of the desktop (Chromium, Firefox) to quit and waits for them, so their SQLite
 * databases (cookies, history) are closed and whole; without it, files are copied as they are.
 */
export const ArchiveScanRequest = named(
  'GuestArchiveScanRequest',
  z.strictObject({
    paths: Paths,
    exclude: Excludes,
    previous: Entries.default([]),
    quiesce: z.boolean().default(false),
  }),
);
export type ArchiveScanRequest = z.infer<typeof ArchiveScanRequest>;

/** ArchiveSkip names a path left out and why (a socket, a lock, a link leaving the home). */
export const ArchiveSkip = named(
  'GuestArchiveSkip',
  z.strictObject({ path: z.string(), reason: z.string() }),
);
export type ArchiveSkip = z.infer<typeof ArchiveSkip>;

export const ArchiveScanResponse = named(
  'GuestArchiveScanResponse',
  z.strictObject({
    /** Sorted by path, parents before children. */
    entries: Entries,
    skipped: z.array(ArchiveSkip),
    /** Bytes of every file in the manifest. */
    total_bytes: z.int().min(0),
    /** Bytes the scan read to hash (files the quick check did not vouch for). */
    hashed_bytes: z.int().min(0),
    /** Browsers asked to quit first (quiesce), by process name. */
    quiesced: z.array(z.string()),
  }),
);
export type ArchiveScanResponse = z.infer<typeof ArchiveScanResponse>;

/** ChunkRef names one chunk by the file it was scanned from and its index in that file. */
export const ArchiveChunkRef = named(
  'GuestArchiveChunkRef',
  z.strictObject({ path: HomePath, index: z.int().min(0), hash: Sha256 }),
);
export type ArchiveChunkRef = z.infer<typeof ArchiveChunkRef>;

/**
 * ArchiveReadRequest reads chunks for upload. Their bytes are hashed again: a file changed since
 * the scan is 409 `conflict` (details.path), and the caller scans again.
 */
export const ArchiveReadRequest = named(
  'GuestArchiveReadRequest',
  z.strictObject({
    chunks: z
      .array(ArchiveChunkRef)
      .min(1)
      .max(ARCHIVE_TRANSFER_MAX_BYTES / (64 * 1024)),
  }),
);
export type ArchiveReadRequest = z.infer<typeof ArchiveReadRequest>;

/** ArchiveBlob is one chunk's bytes in base64, with its id. */
export const ArchiveBlob = named(
  'GuestArchiveBlob',
  z.strictObject({
    hash: Sha256,
    data: z.string().max(Math.ceil(ARCHIVE_CHUNK_BYTES / 3) * 4),
  }),
);
export type ArchiveBlob = z.infer<typeof ArchiveBlob>;

export const ArchiveReadResponse = named(
  'GuestArchiveReadResponse',
  z.strictObject({ blobs: z.array(ArchiveBlob) }),
);
export type ArchiveReadResponse = z.infer<typeof ArchiveReadResponse>;

/** ArchiveNeedRequest asks which chunks a restore of `entries` must stage. */
export const ArchiveNeedRequest = named(
  'GuestArchiveNeedRequest',
  z.strictObject({ entries: Entries }),
);
export type ArchiveNeedRequest = z.infer<typeof ArchiveNeedRequest>;

export const ArchiveNeedResponse = named(
  'GuestArchiveNeedResponse',
  z.strictObject({
    /**
     * Chunk ids neither staged nor held by a home file that already matches its entry (same
     * size, mtime and mode): each once, in the order of the entries.
     */
    needed: z.array(Sha256),
  }),
);
export type ArchiveNeedResponse = z.infer<typeof ArchiveNeedResponse>;

/** ArchiveStageRequest hands chunks to the guest ahead of `archive.apply`; each is checked against its id. */
export const ArchiveStageRequest = named(
  'GuestArchiveStageRequest',
  z.strictObject({ blobs: z.array(ArchiveBlob).min(1).max(64) }),
);
export type ArchiveStageRequest = z.infer<typeof ArchiveStageRequest>;

export const ArchiveStageResponse = named(
  'GuestArchiveStageResponse',
  z.strictObject({ staged: z.int().min(0), staged_bytes: z.int().min(0) }),
);
export type ArchiveStageResponse = z.infer<typeof ArchiveStageResponse>;

/**
 * ArchiveApplyRequest makes `paths` of the home hold exactly `entries`: files written atomically
 * from staged chunks (or kept when they already match), modes and mtimes set, symlinks made only
 * when their target stays inside the home, and everything else under `paths` removed (excluded
 * names are left alone). A chunk neither staged nor present is 409 `conflict` with
 * details.missing, before anything changes. Staged chunks are removed afterwards.
 */
export const ArchiveApplyRequest = named(
  'GuestArchiveApplyRequest',
  z.strictObject({ paths: Paths, exclude: Excludes, entries: Entries }),
);
export type ArchiveApplyRequest = z.infer<typeof ArchiveApplyRequest>;

export const ArchiveApplyResponse = named(
  'GuestArchiveApplyResponse',
  z.strictObject({
    written: z.int().min(0),
    kept: z.int().min(0),
    deleted: z.int().min(0),
    skipped: z.array(ArchiveSkip),
    written_bytes: z.int().min(0),
  }),
);
export type ArchiveApplyResponse = z.infer<typeof ArchiveApplyResponse>;

/**
 * The binary form of `archive.read` and `archive.stage` (same routes, chosen by content type):
 * chunk bytes travel raw, concatenated, instead of base64 inside JSON (a third smaller and no
 * JSON parse of megabytes on either side). The chunks' ids and lengths, in body order, ride in
 * the ARCHIVE_CHUNKS_HEADER header as `hash:length` pairs joined by commas. A read asks for it
 * with `accept: application/octet-stream` (the request body stays JSON); a stage sends it as its
 * body with `content-type: application/octet-stream`. Bounds and hash checks are the JSON form's.
 */
export const ARCHIVE_BINARY_TYPE = 'application/octet-stream';
export const ARCHIVE_CHUNKS_HEADER = 'x-cubicle-chunks';
/** Chunks one binary stage carries at most (as the JSON form's blobs). */
export const ARCHIVE_STAGE_MAX_BLOBS = 64;

/** ArchiveChunkSpan is one chunk of a binary body: its id and its length in bytes. */
export interface ArchiveChunkSpan {
  hash: string;
  length: number;
}

/** formatChunkSpans writes the ARCHIVE_CHUNKS_HEADER value for chunks in body order. */
export const formatChunkSpans = (spans: readonly ArchiveChunkSpan[]): string =>
  spans.map((s) => `${s.hash}:${s.length}`).join(',');

/**
 * parseChunkSpans reads an ARCHIVE_CHUNKS_HEADER value, or answers null when it is malformed
 * (an id that is not SHA-256 hex, a length that is not a whole number up to ARCHIVE_CHUNK_BYTES,
 * more than `max` chunks, or lengths that do not add up to `bodyLength`).
 */
export function parseChunkSpans(
  value: string | undefined,
  bodyLength: number,
  max: number,
): ArchiveChunkSpan[] | null {
  if (value === undefined) return null;
  const spans: ArchiveChunkSpan[] = [];
  let total = 0;
  for (const part of value === '' ? [] : value.split(',')) {
    const m = /^([0-9a-f]{64}):(0|[1-9][0-9]{0,8})$/.exec(part.trim());
    if (!m) return null;
    const length = Number(m[2]);
    if (length > ARCHIVE_CHUNK_BYTES) return null;
    spans.push({ hash: m[1]!, length });
    total += length;
  }
  if (spans.length > max || total !== bodyLength) return null;
  return spans;
}
