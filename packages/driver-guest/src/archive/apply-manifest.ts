import { randomBytes } from 'node:crypto';
import {
  chmod,
  copyFile,
  lstat,
  lutimes,
  mkdir,
  open,
  readdir,
  rename,
  rm,
  symlink,
  unlink,
  utimes,
} from 'node:fs/promises';
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
import { hasSymlinkParent, inHome, isInside } from './home-root.js';
import { topPaths } from './scan-home.js';
import { STAGING_DIR, clearStaging, findStaged, isStaged, type Stages } from './staging.js';

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
  for (const e of req.entries) {
    if (e.type !== 'file') continue;
    if (await matchesOnDisk(home, e)) keep.add(e.path);
    else for (const h of e.chunks) if (!(await isStaged(stages, h))) missing.add(h);
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
  const prune = async (path: string): Promise<void> => {
    if (exclude.has(basename(path))) return;
    const abs = inHome(home, path);
    const info = await lstat(abs).catch(() => null);
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
      await rm(abs, { recursive: true, force: true });
      deleted += 1;
      return;
    }
    if (kind === 'directory') for (const name of await readdir(abs)) await prune(`${path}/${name}`);
  };
  for (const top of tops) if (!(await hasSymlinkParent(home, top))) await prune(top);

  let written = 0;
  let writtenBytes = 0;
  for (const e of req.entries) {
    const abs = inHome(home, e.path);
    if (await hasSymlinkParent(home, e.path)) {
      skipped.push({ path: e.path, reason: 'a parent directory is a symlink' });
      continue;
    }
    await mkdir(dirname(abs), { recursive: true, mode: 0o700 });
    switch (e.type) {
      case 'directory':
        await mkdir(abs, { recursive: true, mode: e.mode });
        await chmod(abs, e.mode);
        break;
      case 'symlink': {
        const target = resolve(dirname(abs), e.target);
        if (!isInside(home, target)) {
          skipped.push({ path: e.path, reason: 'the link leads out of the home' });
          break;
        }
        await rm(abs, { force: true });
        await symlink(e.target, abs);
        await lutimes(abs, secondsOf(e.mtime_ms), secondsOf(e.mtime_ms));
        break;
      }
      case 'file':
        if (keep.has(e.path)) break;
        await writeFromChunks(stages, abs, e, uses.get(e.chunks[0] ?? '') === 1);
        written += 1;
        writtenBytes += e.size;
        break;
      default:
        e satisfies never;
    }
  }
  // Directory mtimes last (writing their children moved them), deepest first.
  for (const e of [...req.entries].reverse())
    if (e.type === 'directory' && !(await hasSymlinkParent(home, e.path))) {
      const t = secondsOf(e.mtime_ms);
      await utimes(inHome(home, e.path), t, t).catch(() => undefined);
    }
  await clearStaging(home);
  return { written, kept: keep.size, deleted, skipped, written_bytes: writtenBytes };
}

/**
 * writeFromChunks assembles a file from staged chunks into a temp file beside it, then renames.
 * A one-chunk file whose chunk nothing else uses (`sole`) takes the staged file itself when it is
 * in the home's own staging area: that is inside the home, so a rename, not a copy.
 */
async function writeFromChunks(
  stages: Stages,
  abs: string,
  e: FileEntry,
  sole: boolean,
): Promise<void> {
  const temp = join(dirname(abs), `.${basename(abs)}.${randomBytes(4).toString('hex')}.restore`);
  const staged = async (hash: string) => {
    const found = await findStaged(stages, hash);
    // Checked before anything was written; gone since only if something removed it meanwhile.
    if (!found) throw new AppError('conflict', `chunk ${hash} is no longer staged`);
    return found;
  };
  try {
    if (e.chunks.length === 1) {
      const only = await staged(e.chunks[0]!);
      if (sole && only.isOwn) await rename(only.path, temp);
      else await copyFile(only.path, temp);
    } else {
      const out = await open(temp, 'wx', 0o600);
      try {
        for (const h of e.chunks) {
          const src = await open((await staged(h)).path, 'r');
          try {
            await out.writeFile(await src.readFile());
          } finally {
            await src.close();
          }
        }
      } finally {
        await out.close();
      }
    }
    await chmod(temp, e.mode);
    await utimes(temp, secondsOf(e.mtime_ms), secondsOf(e.mtime_ms));
    await rename(temp, abs);
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    throw err;
  }
}
