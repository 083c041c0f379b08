import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AppError } from '@cubicle/contract/errors';
import {
  ARCHIVE_TRANSFER_MAX_BYTES,
  type ArchiveStageRequest,
  type ArchiveStageResponse,
} from '@cubicle/contract/guest';
import { sha256 } from './hash-file.js';

/**
 * The staging area lives inside the home (same filesystem as the files it becomes, and counted
 * against the home's own size limit) under a name every scan skips.
 */
export const STAGING_DIR = '.cubicle-archive';

export const stagingOf = (home: string) => join(home, STAGING_DIR, 'staging');
export const stagedPath = (home: string, hash: string) => join(stagingOf(home), hash);

/** isStaged says whether a chunk is waiting in the staging area. */
export const isStaged = (home: string, hash: string): Promise<boolean> =>
  stat(stagedPath(home, hash)).then(
    (s) => s.isFile(),
    () => false,
  );

/**
 * stageChunks writes chunks into the staging area, each after checking its bytes against its id
 * (409 `conflict` for a mismatch: the caller sent another chunk's bytes). Each lands by rename,
 * so a half-written chunk is never taken for a whole one.
 */
export async function stageChunks(
  home: string,
  req: ArchiveStageRequest,
): Promise<ArchiveStageResponse> {
  return stageChunkBytes(
    home,
    req.blobs.map((b) => ({ hash: b.hash, bytes: Buffer.from(b.data, 'base64') })),
  );
}

/** stageChunkBytes is stageChunks with the bytes raw (the binary form of archive.stage). */
export async function stageChunkBytes(
  home: string,
  decoded: readonly { hash: string; bytes: Uint8Array }[],
): Promise<ArchiveStageResponse> {
  const total = decoded.reduce((n, b) => n + b.bytes.length, 0);
  if (total > ARCHIVE_TRANSFER_MAX_BYTES)
    throw new AppError(
      'payload_too_large',
      `${total} bytes staged at once; the bound is ${ARCHIVE_TRANSFER_MAX_BYTES}`,
      {
        limit: ARCHIVE_TRANSFER_MAX_BYTES,
      },
    );
  for (const b of decoded)
    if (sha256(b.bytes) !== b.hash)
      throw new AppError('conflict', `chunk ${b.hash} does not hash to its id`, { hash: b.hash });
  const dir = stagingOf(home);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // Written side by side: each is its own temp file and rename.
  await Promise.all(
    decoded.map(async (b) => {
      const temp = join(dir, `.${b.hash}.${randomBytes(4).toString('hex')}.tmp`);
      try {
        await writeFile(temp, b.bytes, { mode: 0o600, flag: 'wx' });
        await rename(temp, stagedPath(home, b.hash));
      } catch (err) {
        await unlink(temp).catch(() => undefined);
        throw err;
      }
    }),
  );
  return { staged: decoded.length, staged_bytes: total };
}

/** clearStaging removes the staging area (after an apply, or to drop an abandoned restore). */
export const clearStaging = (home: string) =>
  rm(join(home, STAGING_DIR), { recursive: true, force: true });
