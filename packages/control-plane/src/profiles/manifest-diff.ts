import {
  ARCHIVE_CHUNK_BYTES,
  type ArchiveChunkRef,
  type ArchiveEntry,
} from '@cubicle/contract/guest';

type FileEntry = Extract<ArchiveEntry, { type: 'file' }>;

/** ManifestDiff is what a new manifest changes against the last stored one. */
export interface ManifestDiff {
  /** Paths (any type) the new manifest has and the old did not. */
  added: string[];
  /** Paths in both whose content, type, mode or link target differ. */
  changed: string[];
  /** Paths the old manifest had and the new does not. */
  removed: string[];
  /**
   * Chunks the new manifest references that the old did not: what a save must upload (each
   * once, with where to read it). Chunks the old version had are stored already.
   */
  upload: (ArchiveChunkRef & { size: number })[];
  uploadBytes: number;
}

const sameEntry = (a: ArchiveEntry, b: ArchiveEntry): boolean => {
  if (a.type !== b.type) return false;
  switch (a.type) {
    case 'file': {
      const f = b as FileEntry;
      return a.hash === f.hash && a.mode === f.mode && a.size === f.size;
    }
    case 'directory':
      return a.mode === (b as typeof a).mode;
    case 'symlink':
      return a.target === (b as typeof a).target;
    default:
      return a satisfies never;
  }
};

/** chunkSize is the byte length of chunk `index` of a file of `size` bytes. */
export const chunkSize = (size: number, index: number): number =>
  Math.max(0, Math.min(ARCHIVE_CHUNK_BYTES, size - index * ARCHIVE_CHUNK_BYTES));

/** chunksOf answers every chunk id a manifest references. */
export function chunksOf(entries: readonly ArchiveEntry[]): Set<string> {
  const out = new Set<string>();
  for (const e of entries) if (e.type === 'file') for (const h of e.chunks) out.add(h);
  return out;
}

/**
 * diffManifests compares two manifests of the same paths: which paths were added, changed and
 * removed (mtime alone is no change: a file touched but equal uploads nothing), and which chunks
 * a save must upload: those the new manifest references and the old does not, each once, with
 * the first file and index it can be read from. Pure; a save is incremental because of it.
 */
export function diffManifests(
  previous: readonly ArchiveEntry[],
  next: readonly ArchiveEntry[],
): ManifestDiff {
  const before = new Map(previous.map((e) => [e.path, e]));
  const after = new Set(next.map((e) => e.path));
  const stored = chunksOf(previous);
  const queued = new Set<string>();
  const diff: ManifestDiff = { added: [], changed: [], removed: [], upload: [], uploadBytes: 0 };
  for (const e of next) {
    const old = before.get(e.path);
    if (!old) diff.added.push(e.path);
    else if (!sameEntry(old, e)) diff.changed.push(e.path);
    if (e.type !== 'file') continue;
    e.chunks.forEach((hash, index) => {
      if (stored.has(hash) || queued.has(hash)) return;
      queued.add(hash);
      const size = chunkSize(e.size, index);
      diff.upload.push({ path: e.path, index, hash, size });
      diff.uploadBytes += size;
    });
  }
  for (const e of previous) if (!after.has(e.path)) diff.removed.push(e.path);
  return diff;
}
