import { AppError } from '@cubicle/contract/errors';

/**
 * mapFsError turns a Node fs error into the AppError a caller can act on: missing → 404,
 * permission → 403, wrong kind of path or not empty → 409. Anything else stays a 500.
 */
export function mapFsError(err: unknown, path: string): unknown {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  switch (code) {
    case 'ENOENT':
      return new AppError('not_found', `no such file or directory: ${path}`);
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return new AppError('forbidden', `permission denied: ${path}`);
    case 'EISDIR':
      return new AppError('conflict', `is a directory: ${path}`);
    case 'ENOTDIR':
      return new AppError('conflict', `a component of the path is not a directory: ${path}`);
    case 'ENOTEMPTY':
      return new AppError('conflict', `directory not empty (use recursive): ${path}`);
    case 'EEXIST':
      return new AppError('conflict', `already exists: ${path}`);
    case 'ELOOP':
      return new AppError('conflict', `too many symbolic links: ${path}`);
    case 'ENOSPC':
      return new AppError('payload_too_large', `no space left on the device for ${path}`);
    default:
      return err;
  }
}

/** withFsErrors runs an fs operation and rethrows its failure as mapFsError says. */
export async function withFsErrors<T>(path: string, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    throw mapFsError(err, path);
  }
}
