import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  constants,
  copyFileSync,
  lstatSync,
  lutimesSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeSync,
} from 'node:fs';
import { lstat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { AppError } from '@cubicle/contract/errors';
import type {
  ArchiveApplyRequest,
  ArchiveApplyResponse,
  ArchiveEntry,
  ArchiveNeedRequest,
  ArchiveNeedResponse,
  ArchiveSkip,
} from '@cubicle/contract/guest';
import { hasSymlinkParent, hasSymlinkParentSync, inHome, isInside } from './home-root.js';
import { topPaths } from './scan-home.js';
import { STAGING_DIR, clearStaging, findStagedSync, isStaged, type Stages } from './staging.js';

type FileEntry = Extract<ArchiveEntry, { type: 'file' }>;

/**
 * secondsOf turns a manifest's whole-millisecond mtime into utimes' seconds, half a millisecond
 * in: a float of whole milliseconds can land just below them in nanoseconds, and the quick check
 * (floor of mtimeMs) would then see a changed file.
 */
const secondsOf = (ms: number) => (ms + 0.5) / 1000;

/**
 * matchesOnDisk is the quick check: the home already holds this file as the entry describes it
 * (a regular file, not behind a symlink, same size, mtime and mode), so it need not be written.
 */
async function matchesOnDisk(home: string, e: FileEntry): Promise<boolean> {
  if (await hasSymlinkParent(home, e.path)) return false;
  const info = await lstat(inHome(home, e.path)).catch(() => null);
  return (
    !!info &&
    info.isFile() &&
    info.size === e.size &&
    Math.floor(info.mtimeMs) === e.mtime_ms &&
    (info.mode & 0o7777) === e.mode
  );
}

/**
 * needChunks answers the chunks a restore of the entries must still stage, each once (a chunk in
 * the host's stage, `hostStage`, is staged already).
 */
export async function needChunks(
  home: string,
  req: ArchiveNeedRequest,
  hostStage: string | null = null,
): Promise<ArchiveNeedResponse> {
  const stages: Stages = { home, host: hostStage };
  const needed = new Set<string>();
  for (const e of req.entries) {
    if (e.type !== 'file' || (await matchesOnDisk(home, e))) continue;
    for (const h of e.chunks) if (!needed.has(h) && !(await isStaged(stages, h))) needed.add(h);
  }
  return { needed: [...needed] };
}

const under = (path: string, tops: readonly string[]) =>
  tops.some((t) => path === t || path.startsWith(t + '/'));

/**
 * The apply's file work is synchronous: on a loaded machine every thread-pool round trip of an
 * async fs call waits for two wake-ups, which cost more than the call (a 50-file restore: 250-660
 * ms of wall and 70-110 ms of CPU async, 115-140 ms and 30 ms sync, at load 30 on 2 cores). The
 * event loop is let go every YIELD_BYTES written or YIELD_ENTRIES entries, so a large restore
 * does not hold the guest's other requests for long.
 */
const YIELD_BYTES = 8 * 1024 * 1024;
const YIELD_ENTRIES = 128;
const yieldLoop = () => new Promise<void>((r) => setImmediate(r));

/** matchesOnDiskSync is matchesOnDisk in one go. */
function matchesOnDiskSync(home: string, e: FileEntry): boolean {
  if (hasSymlinkParentSync(home, e.path)) return false;
  const info = lstatSync(inHome(home, e.path), { throwIfNoEntry: false });
  return (
    !!info &&
    info.isFile() &&
    info.size === e.size &&
    Math.floor(info.mtimeMs) === e.mtime_ms &&
    (info.mode & 0o7777) === e.mode
  );
}

/**
 * applyManifest makes `paths` of the home hold exactly `entries` (see ArchiveApplyRequest).
 * Order: refuse before touching anything (entries outside `paths`, chunks missing); remove what
 * the manifest does not have (or has as another type); then create in manifest order (parents
 * first), files by temp file + rename so a reader never sees half a file; directory mtimes last.
 * Nothing is ever written through a symlink: a path with a symlink parent is skipped. Chunks come
 * from the home's staging area or, when the desktop has one, the host's stage (`hostStage`,
 * read-only here: copied, never moved).
 */
export async function applyManifest(
  home: string,
  req: ArchiveApplyRequest,
  hostStage: string | null = null,
): Promise<ArchiveApplyResponse> {
  const stages: Stages = { home, host: hostStage };
  const tops = topPaths(req.paths);
  const exclude = new Set([...req.exclude, STAGING_DIR]);
  const byPath = new Map<string, ArchiveEntry>();
  for (const e of req.entries) {
    if (!under(e.path, tops))
      throw new AppError('conflict', `manifest entry ${e.path} is outside the paths applied`);
    byPath.set(e.path, e);
  }

  const keep = new Set<string>();
  const missing = new Set<string>();
  const found = new Set<string>();
  let seen = 0;
  for (const e of req.entries) {
    if (++seen % YIELD_ENTRIES === 0) await yieldLoop();
    if (e.type !== 'file') continue;
    if (matchesOnDiskSync(home, e)) keep.add(e.path);
    else
      for (const h of e.chunks) {
        if (found.has(h) || missing.has(h)) continue;
        if (findStagedSync(stages, h)) found.add(h);
        else missing.add(h);
      }
  }
  // How many times the files to write use each chunk: one used once is moved, not copied.
  const uses = new Map<string, number>();
  for (const e of req.entries)
    if (e.type === 'file' && !keep.has(e.path))
      for (const h of e.chunks) uses.set(h, (uses.get(h) ?? 0) + 1);
  if (missing.size > 0)
    throw new AppError('conflict', `${missing.size} chunks are neither staged nor in the home`, {
      missing: [...missing].slice(0, 100),
    });

  const skipped: ArchiveSkip[] = [];
  let deleted = 0;
  // Remove what is not in the manifest (or is there as another type), without following links.
  const prune = (path: string): void => {
    if (exclude.has(basename(path))) return;
    const abs = inHome(home, path);
    const info = lstatSync(abs, { throwIfNoEntry: false });
    if (!info) return;
    const want = byPath.get(path);
    const kind = info.isSymbolicLink()
      ? 'symlink'
      : info.isDirectory()
        ? 'directory'
        : info.isFile()
          ? 'file'
          : 'other';
    if (!want || want.type !== kind) {
      rmSync(abs, { recursive: true, force: true });
      deleted += 1;
      return;
    }
    if (kind === 'directory') for (const name of readdirSync(abs)) prune(`${path}/${name}`);
  };
  for (const top of tops) if (!hasSymlinkParentSync(home, top)) prune(top);

  let written = 0;
  let writtenBytes = 0;
  let sinceYield = 0;
  const made = new Set<string>();
  for (const e of req.entries) {
    if (sinceYield >= YIELD_BYTES || ++seen % YIELD_ENTRIES === 0) {
      sinceYield = 0;
      await yieldLoop();
    }
    const abs = inHome(home, e.path);
    if (hasSymlinkParentSync(home, e.path)) {
      skipped.push({ path: e.path, reason: 'a parent directory is a symlink' });
      continue;
    }
    // Checked for a symlink parent just above; made once per directory of this apply.
    const parent = dirname(abs);
    if (!made.has(parent)) {
      mkdirSync(parent, { recursive: true, mode: 0o700 });
      made.add(parent);
    }
    switch (e.type) {
      case 'directory':
        mkdirSync(abs, { recursive: true, mode: e.mode });
        chmodSync(abs, e.mode);
        made.add(abs);
        break;
      case 'symlink': {
        const target = resolve(dirname(abs), e.target);
        if (!isInside(home, target)) {
          skipped.push({ path: e.path, reason: 'the link leads out of the home' });
          break;
        }
        rmSync(abs, { force: true });
        symlinkSync(e.target, abs);
        lutimesSync(abs, secondsOf(e.mtime_ms), secondsOf(e.mtime_ms));
        break;
      }
      case 'file':
        if (keep.has(e.path)) break;
        writeFromChunks(stages, abs, e, uses.get(e.chunks[0] ?? '') === 1);
        written += 1;
        writtenBytes += e.size;
        sinceYield += e.size;
        break;
      default:
        e satisfies never;
    }
  }
  // Directory mtimes last (writing their children moved them), deepest first.
  for (const e of [...req.entries].reverse())
    if (e.type === 'directory' && !hasSymlinkParentSync(home, e.path)) {
      const t = secondsOf(e.mtime_ms);
      try {
        utimesSync(inHome(home, e.path), t, t);
      } catch {
        // gone or replaced meanwhile: its mtime is not worth failing the apply
      }
    }
  await clearStaging(home);
  return { written, kept: keep.size, deleted, skipped, written_bytes: writtenBytes };
}

/**
 * writeFromChunks assembles a file from staged chunks into a temp file beside it, then renames.
 * A one-chunk file whose chunk nothing else uses (`sole`) takes the staged file itself when it is
 * in the home's own staging area: that is inside the home, so a rename, not a copy.
 */
function writeFromChunks(stages: Stages, abs: string, e: FileEntry, sole: boolean): void {
  const temp = join(dirname(abs), `.${basename(abs)}.${randomBytes(4).toString('hex')}.restore`);
  const staged = (hash: string) => {
    const found = findStagedSync(stages, hash);
    // Checked before anything was written; gone since only if something removed it meanwhile.
    if (!found) throw new AppError('conflict', `chunk ${hash} is no longer staged`);
    return found;
  };
  try {
    if (e.chunks.length === 1) {
      const only = staged(e.chunks[0]!);
      if (sole && only.isOwn) renameSync(only.path, temp);
      else copyFileSync(only.path, temp, constants.COPYFILE_EXCL);
    } else {
      const out = openSync(temp, 'wx', 0o600);
      try {
        for (const h of e.chunks) {
          const bytes = readFileSync(staged(h).path);
          for (let at = 0; at < bytes.length;) at += writeSync(out, bytes, at, bytes.length - at);
        }
      } finally {
        closeSync(out);
      }
    }
    chmodSync(temp, e.mode);
    utimesSync(temp, secondsOf(e.mtime_ms), secondsOf(e.mtime_ms));
    renameSync(temp, abs);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
}
