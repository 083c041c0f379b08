import { lstatSync } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { AppError } from '@cubicle/contract/errors';

/**
 * homeOf answers the desktop user's home, where every archive path is rooted: HOME of the
 * processes the driver starts (a sandbox's is /home/sandbox). A driver with no HOME, or `/`,
 * refuses: restoring into the wrong tree would overwrite files that are not the desktop's.
 */
export function homeOf(childEnv: Record<string, string | undefined>): string {
  const home = childEnv.HOME;
  if (!home || resolve(home) === '/')
    throw new AppError('conflict', 'the desktop has no home directory to archive');
  return resolve(home);
}

/** inHome joins a contract HomePath (already free of `..`) onto the home. */
export const inHome = (home: string, path: string): string => join(home, path);

/** isInside says whether `target` (absolute, normalized) is the home or below it. */
export const isInside = (home: string, target: string): boolean =>
  target === home || target.startsWith(home + sep);

/**
 * hasSymlinkParent says whether a component between the home and `path` (exclusive) is a
 * symlink (or not a directory): such a path may lead out of the home, so it is neither read nor
 * written through. Missing components answer false (nothing to follow).
 */
export async function hasSymlinkParent(home: string, path: string): Promise<boolean> {
  const parts = path.split('/');
  let at = home;
  for (const part of parts.slice(0, -1)) {
    at = join(at, part);
    const info = await lstat(at).catch(() => null);
    if (!info) return false;
    if (!info.isDirectory()) return true;
  }
  return false;
}

/** hasSymlinkParentSync is hasSymlinkParent in one go (applyManifest's file work is synchronous). */
export function hasSymlinkParentSync(home: string, path: string): boolean {
  const parts = path.split('/');
  let at = home;
  for (const part of parts.slice(0, -1)) {
    at = join(at, part);
    const info = lstatSync(at, { throwIfNoEntry: false });
    if (!info) return false;
    if (!info.isDirectory()) return true;
  }
  return false;
}
