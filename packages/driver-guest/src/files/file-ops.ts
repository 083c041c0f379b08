import { randomBytes } from 'node:crypto';
import {
  chmod,
  lstat,
  mkdir,
  open,
  readdir,
  readlink,
  rename,
  rm,
  rmdir,
  unlink,
  writeFile,
} from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Stats } from 'node:fs';
import { AppError } from '@cubicle/contract/errors';
import {
  FILE_READ_MAX_BYTES,
  FILE_WRITE_MAX_BYTES,
  type FileDeleteRequest,
  type FileDeleteResponse,
  type FileEntry,
  type FileListRequest,
  type FileListResponse,
  type FileReadRequest,
  type FileReadResponse,
  type FileStat,
  type FileType,
  type FileWriteRequest,
  type FileWriteResponse,
} from '@cubicle/contract/guest';
import { withFsErrors } from './map-fs-error.js';

const typeOf = (s: Stats): FileType =>
  s.isFile() ? 'file' : s.isDirectory() ? 'directory' : s.isSymbolicLink() ? 'symlink' : 'other';
const modeOf = (s: Stats) => (s.mode & 0o7777).toString(8).padStart(3, '0');
const fatal = new TextDecoder('utf-8', { fatal: true });

/**
 * readFileRange reads one byte range. The range is capped at the smaller of the protocol's
 * FILE_READ_MAX_BYTES and the daemon's own limit (`eof` then says there is more); UTF-8 that
 * does not decode is refused rather than returned with replacement characters.
 */
export async function readFileRange(
  req: FileReadRequest,
  maxBytes: number,
): Promise<FileReadResponse> {
  return withFsErrors(req.path, async () => {
    const handle = await open(req.path, 'r');
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw new AppError('conflict', `not a regular file: ${req.path}`);
      const cap = Math.min(FILE_READ_MAX_BYTES, maxBytes);
      const available = Math.max(0, info.size - req.offset);
      const length = Math.min(req.length ?? available, available, cap);
      const buffer = Buffer.alloc(length);
      let read = 0;
      while (read < length) {
        const { bytesRead } = await handle.read(buffer, read, length - read, req.offset + read);
        if (bytesRead === 0) break;
        read += bytesRead;
      }
      const bytes = buffer.subarray(0, read);
      let content: string;
      if (req.encoding === 'base64') content = bytes.toString('base64');
      else {
        try {
          content = fatal.decode(bytes);
        } catch {
          throw new AppError(
            'validation_failed',
            'the range is not valid UTF-8 (binary data or a cut character); read it with encoding "base64"',
          );
        }
      }
      return {
        path: req.path,
        encoding: req.encoding,
        content,
        offset: req.offset,
        length: read,
        size: info.size,
        eof: req.offset + read >= info.size,
      };
    } finally {
      await handle.close();
    }
  });
}

/**
 * writeFileAtomic replaces a file. Atomic writes go to a hidden temporary file beside the
 * target (same filesystem, so rename is atomic) and are renamed over it; on failure the
 * temporary file is removed and the old content is untouched. Over-limit content is 413 before
 * anything touches the disk.
 */
export async function writeFileAtomic(
  req: FileWriteRequest,
  maxBytes: number,
): Promise<FileWriteResponse> {
  const bytes = Buffer.from(req.content, req.encoding);
  const limit = Math.min(FILE_WRITE_MAX_BYTES, maxBytes);
  if (bytes.length > limit) {
    throw new AppError(
      'payload_too_large',
      `file content is ${bytes.length} bytes; the limit is ${limit}`,
      {
        limit,
      },
    );
  }
  return withFsErrors(req.path, async () => {
    const dir = dirname(req.path);
    if (req.create_parents) await mkdir(dir, { recursive: true, mode: 0o755 });
    const existing = await lstat(req.path).catch(() => null);
    if (existing?.isDirectory()) throw new AppError('conflict', `is a directory: ${req.path}`);
    // An existing file keeps its mode unless the request gives one.
    const mode = req.mode ? parseInt(req.mode, 8) : existing ? existing.mode & 0o7777 : 0o644;
    if (!req.atomic) {
      await writeFile(req.path, bytes, { mode });
      if (req.mode || existing) await chmod(req.path, mode);
      return { path: req.path, size: bytes.length, atomic: false };
    }
    const temp = join(dir, `.${basename(req.path)}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      const handle = await open(temp, 'wx', mode);
      try {
        await handle.writeFile(bytes);
        await handle.chmod(mode); // the umask may have trimmed the mode given to open
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, req.path);
    } catch (err) {
      await unlink(temp).catch(() => undefined);
      throw err;
    }
    return { path: req.path, size: bytes.length, atomic: true };
  });
}

/** statPath describes a path without following a final symlink. */
export async function statPath(path: string): Promise<FileStat> {
  return withFsErrors(path, async () => {
    const info = await lstat(path);
    const target = info.isSymbolicLink() ? await readlink(path) : undefined;
    return {
      path,
      type: typeOf(info),
      size: info.size,
      mode: modeOf(info),
      mtime: info.mtime.toISOString(),
      uid: info.uid,
      gid: info.gid,
      ...(target !== undefined ? { symlink_target: target } : {}),
    };
  });
}

/** listDirectory lists up to `max_entries` names, sorted, with lstat of each. */
export async function listDirectory(req: FileListRequest): Promise<FileListResponse> {
  return withFsErrors(req.path, async () => {
    const names = (await readdir(req.path)).sort();
    const kept = names.slice(0, req.max_entries);
    const entries: FileEntry[] = [];
    for (const name of kept) {
      // An entry removed between readdir and lstat is skipped rather than failing the listing.
      const info = await lstat(join(req.path, name)).catch(() => null);
      if (!info) continue;
      entries.push({
        name,
        type: typeOf(info),
        size: info.size,
        mode: modeOf(info),
        mtime: info.mtime.toISOString(),
      });
    }
    return { path: req.path, entries, truncated: names.length > kept.length };
  });
}

/** deletePath removes a file or symlink, or a directory (a non-empty one only with `recursive`). */
export async function deletePath(req: FileDeleteRequest): Promise<FileDeleteResponse> {
  return withFsErrors(req.path, async () => {
    const info = await lstat(req.path).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' && req.missing_ok) return null;
      throw err;
    });
    if (!info) return { path: req.path, deleted: false };
    if (info.isDirectory()) {
      if (req.recursive) await rm(req.path, { recursive: true, force: false });
      else await rmdir(req.path); // ENOTEMPTY → 409, with a hint to use recursive
    } else await unlink(req.path);
    return { path: req.path, deleted: true };
  });
}
