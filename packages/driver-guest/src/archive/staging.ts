import { randomBytes } from 'node:crypto';
import { lstatSync } from 'node:fs';
import { lstat, mkdir, rename, rm, unlink, writeFile } from 'node:fs/promises';
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

/**
 * HOST_STAGE_DIR is where a local sandbox sees the chunks its host staged for it: a read-only
 * bind of a host directory (start-sandbox.ts), so the control plane on the same machine writes a
 * restore's chunks there instead of streaming them through archive.stage. Nothing inside the
 * sandbox can write, link or replace anything in it; the host checks each chunk's hash as it
 * writes it and removes it after the apply.
 */
export const HOST_STAGE_DIR = '/run/cubicle/stage';

/**
 * hostStageOf answers `dir` when this guest has a host stage there (a directory, not a link), or
 * null: a desktop in a Pod or VM, or one started before host staging, has none.
 */
export const hostStageOf = (dir: string = HOST_STAGE_DIR): Promise<string | null> =>
  lstat(dir).then(
    (s) => (s.isDirectory() ? dir : null),
    () => null,
  );

/**
 * Where staged chunks are looked for: the home's own staging area (archive.stage) and, when the
 * desktop has one, the host's (HOST_STAGE_DIR).
 */
export interface Stages {
  home: string;
  host: string | null;
}

const isFileAt = (path: string): Promise<boolean> =>
  lstat(path).then(
    (s) => s.isFile(),
    () => false,
  );

/**
 * findStaged answers where a staged chunk is: in the home's staging area (`isOwn`: it may be
 * moved into place) or in the host's (read-only: it is copied), or null when in neither.
 */
export async function findStaged(
  stages: Stages,
  hash: string,
): Promise<{ path: string; isOwn: boolean } | null> {
  const own = stagedPath(stages.home, hash);
  if (await isFileAt(own)) return { path: own, isOwn: true };
  if (stages.host === null) return null;
  const host = join(stages.host, hash);
  return (await isFileAt(host)) ? { path: host, isOwn: false } : null;
}

const isFileAtSync = (path: string): boolean =>
  lstatSync(path, { throwIfNoEntry: false })?.isFile() ?? false;

/** findStagedSync is findStaged in one go (applyManifest's file work is synchronous). */
export function findStagedSync(
  stages: Stages,
  hash: string,
): { path: string; isOwn: boolean } | null {
  const own = stagedPath(stages.home, hash);
  if (isFileAtSync(own)) return { path: own, isOwn: true };
  if (stages.host === null) return null;
  const host = join(stages.host, hash);
  return isFileAtSync(host) ? { path: host, isOwn: false } : null;
}

/** isStaged says whether a chunk is waiting in the staging area (or the host's). */
export const isStaged = async (stages: Stages, hash: string): Promise<boolean> =>
  (await findStaged(stages, hash)) !== null;

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
