import { AppError } from '@cubicle/contract/errors';
import {
  ARCHIVE_CHUNK_BYTES,
  ARCHIVE_TRANSFER_MAX_BYTES,
  type ArchiveReadRequest,
  type ArchiveReadResponse,
} from '@cubicle/contract/guest';
import { openNoFollow, readFull, sha256 } from './hash-file.js';
import { hasSymlinkParent, inHome } from './home-root.js';

/**
 * readChunks answers the bytes of scanned chunks, in request order, until the next one would
 * pass ARCHIVE_TRANSFER_MAX_BYTES (at least one is always answered; the caller asks again for
 * the rest). Each chunk is hashed again: a file changed or gone since the scan is 409
 * `conflict` (details.path), and the caller scans again rather than store a chunk under a
 * wrong id.
 */
export async function readChunks(
  home: string,
  req: ArchiveReadRequest,
): Promise<ArchiveReadResponse> {
  const chunks = await readChunkBytes(home, req);
  return { blobs: chunks.map((c) => ({ hash: c.hash, data: c.bytes.toString('base64') })) };
}

/** readChunkBytes is readChunks with the bytes raw (the binary form of archive.read). */
export async function readChunkBytes(
  home: string,
  req: ArchiveReadRequest,
): Promise<{ hash: string; bytes: Buffer }[]> {
  const blobs: { hash: string; bytes: Buffer }[] = [];
  let total = 0;
  for (const ref of req.chunks) {
    const changed = () =>
      new AppError('conflict', `${ref.path} changed since it was scanned`, { path: ref.path });
    if (await hasSymlinkParent(home, ref.path)) throw changed();
    const handle = await openNoFollow(inHome(home, ref.path)).catch(() => {
      throw changed();
    });
    let bytes: Buffer;
    try {
      const buffer = Buffer.allocUnsafe(ARCHIVE_CHUNK_BYTES);
      const n = await readFull(handle, buffer, ref.index * ARCHIVE_CHUNK_BYTES);
      bytes = buffer.subarray(0, n);
    } finally {
      await handle.close();
    }
    if (sha256(bytes) !== ref.hash) throw changed();
    if (blobs.length > 0 && total + bytes.length > ARCHIVE_TRANSFER_MAX_BYTES) break;
    total += bytes.length;
    blobs.push({ hash: ref.hash, bytes });
  }
  return blobs;
}
