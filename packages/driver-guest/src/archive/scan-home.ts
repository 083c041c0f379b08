import { lstatSync, readdirSync, readlinkSync, type Stats } from 'node:fs';
import { basename } from 'node:path';
import { AppError } from '@cubicle/contract/errors';
import {
  ARCHIVE_MAX_ENTRIES,
  type ArchiveEntry,
  type ArchiveScanRequest,
  type ArchiveScanResponse,
  type ArchiveSkip,
} from '@cubicle/contract/guest';
import { hashFile } from './hash-file.js';
import { hasSymlinkParentSync, inHome } from './home-root.js';
import { quiesceBrowsers } from './quiesce-browsers.js';

const modeOf = (s: Stats) => s.mode & 0o7777;

/**
 * The walk's lstat/readdir/readlink calls are synchronous (as applyManifest's file work): on a
 * loaded machine an async call's thread-pool wake-ups cost more than the call. The event loop is
 * let go every YIELD_ENTRIES entries; files to hash are read asynchronously.
 */
const YIELD_ENTRIES = 128;
const yieldLoop = () => new Promise<void>((r) => setImmediate(r));
/** lstatOrNull: gone (or unreadable) between a listing and its lstat is simply not scanned. */
const lstatOrNull = (path: string): Stats | null => {
  try {
    return lstatSync(path, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null;
  }
};

/**
 * topPaths sorts the requested paths and drops any that lies under another one, so each file
 * is described once.
 */
export function topPaths(paths: readonly string[]): string[] {
  const sorted = [...new Set(paths)].sort();
  return sorted.filter((p) => !sorted.some((q) => q !== p && p.startsWith(q + '/')));
}

/**
 * scanHome describes `paths` of the home without following any symlink: directories are walked
 * (names sorted, so parents come before children and a manifest is deterministic), files hashed
 * unless the previous manifest vouches for them (same size, mtime and mode), symlinks recorded
 * as written, and everything else (sockets, FIFOs, devices) and excluded names skipped.
 */
export async function scanHome(
  home: string,
  req: ArchiveScanRequest,
): Promise<ArchiveScanResponse> {
  const quiesced = req.quiesce ? await quiesceBrowsers() : [];
  const previous = new Map<string, Extract<ArchiveEntry, { type: 'file' }>>();
  for (const e of req.previous) if (e.type === 'file') previous.set(e.path, e);
  const exclude = new Set(req.exclude);
  const entries: ArchiveEntry[] = [];
  const skipped: ArchiveSkip[] = [];
  let totalBytes = 0;
  let hashedBytes = 0;

  const visit = async (path: string, info: Stats): Promise<void> => {
    if (entries.length >= ARCHIVE_MAX_ENTRIES)
      throw new AppError('conflict', `more than ${ARCHIVE_MAX_ENTRIES} entries under the paths`);
    if (exclude.has(basename(path))) {
      skipped.push({ path, reason: 'excluded' });
      return;
    }
    const abs = inHome(home, path);
    const mtime_ms = Math.floor(info.mtimeMs);
    if (entries.length % YIELD_ENTRIES === YIELD_ENTRIES - 1) await yieldLoop();
    if (info.isSymbolicLink()) {
      entries.push({ type: 'symlink', path, target: readlinkSync(abs), mtime_ms });
    } else if (info.isDirectory()) {
      entries.push({ type: 'directory', path, mode: modeOf(info), mtime_ms });
      let names: string[];
      try {
        names = readdirSync(abs).sort();
      } catch {
        names = [];
      }
      for (const name of names) {
        const child = `${path}/${name}`;
        // Gone between readdir and lstat (a browser's temp file): simply not part of this scan.
        const childInfo = lstatOrNull(inHome(home, child));
        if (childInfo) await visit(child, childInfo);
      }
    } else if (info.isFile()) {
      const known = previous.get(path);
      const mode = modeOf(info);
      if (known && known.size === info.size && known.mtime_ms === mtime_ms && known.mode === mode) {
        entries.push(known);
      } else {
        const hashed = await hashFile(abs).catch((err: NodeJS.ErrnoException) => {
          if (err.code === 'ENOENT' || err.code === 'ELOOP') return null; // changed under us
          throw err;
        });
        if (!hashed) return;
        hashedBytes += hashed.size;
        entries.push({
          type: 'file',
          path,
          mode,
          size: hashed.size,
          mtime_ms,
          hash: hashed.hash,
          chunks: hashed.chunks,
        });
      }
      totalBytes += info.size;
    } else {
      skipped.push({ path, reason: 'not a file, directory or symlink (socket, FIFO or device)' });
    }
  };

  for (const path of topPaths(req.paths)) {
    if (hasSymlinkParentSync(home, path)) {
      skipped.push({ path, reason: 'a parent directory is a symlink' });
      continue;
    }
    const info = lstatOrNull(inHome(home, path));
    if (info) await visit(path, info);
  }
  return {
    entries,
    skipped,
    total_bytes: totalBytes,
    hashed_bytes: hashedBytes,
    quiesced,
  };
}
