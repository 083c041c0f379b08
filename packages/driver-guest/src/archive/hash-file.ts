import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { ARCHIVE_CHUNK_BYTES } from '@cubicle/contract/guest';

export interface FileHashes {
  hash: string;
  chunks: string[];
  size: number;
}

/**
 * hashFile reads a file once and answers its SHA-256 and its chunks' (ARCHIVE_CHUNK_BYTES each).
 * Opened with O_NOFOLLOW: a path that became a symlink since its lstat fails ELOOP rather than
 * hashing what it points to.
 */
export async function hashFile(path: string): Promise<FileHashes> {
  const handle = await openNoFollow(path);
  try {
    const whole = createHash('sha256');
    const chunks: string[] = [];
    const buffer = Buffer.allocUnsafe(ARCHIVE_CHUNK_BYTES);
    let size = 0;
    for (;;) {
      const n = await readFull(handle, buffer);
      if (n === 0) break;
      const bytes = buffer.subarray(0, n);
      whole.update(bytes);
      chunks.push(createHash('sha256').update(bytes).digest('hex'));
      size += n;
      if (n < buffer.length) break;
    }
    return { hash: whole.digest('hex'), chunks, size };
  } finally {
    await handle.close();
  }
}

type Handle = Awaited<ReturnType<typeof open>>;

/** readFull fills the buffer from the handle's position unless the file ends first. */
export async function readFull(handle: Handle, buffer: Buffer, position?: number): Promise<number> {
  let read = 0;
  while (read < buffer.length) {
    const { bytesRead } = await handle.read(
      buffer,
      read,
      buffer.length - read,
      position === undefined ? null : position + read,
    );
    if (bytesRead === 0) break;
    read += bytesRead;
  }
  return read;
}

export const sha256 = (bytes: Uint8Array): string =>
  createHash('sha256').update(bytes).digest('hex');

/** openNoFollow opens a file for reading, refusing a final symlink (ELOOP). */
export const openNoFollow = (path: string) => open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
