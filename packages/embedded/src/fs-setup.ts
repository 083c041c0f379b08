// Directories, ownership and socket paths for the private servers.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readSync,
  fstatSync,
} from 'node:fs';
import { join } from 'node:path';

/** The account a server process runs as; undefined means "as the current user". */
export interface ServiceUser {
  name: string;
  uid: number;
  gid: number;
}

// sun_path holds 108 bytes including the terminating NUL; keep a margin below that.
const MAX_SOCKET_PATH_BYTES = 100;

/**
 * postgresServiceUser returns the `postgres` system account when we run as root (initdb and
 * postgres refuse to run as root) and undefined otherwise (then the servers run as ourselves).
 */
export function postgresServiceUser(): ServiceUser | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const result = spawnSync('getent', ['passwd', 'postgres'], { encoding: 'utf8' });
  const fields = result.stdout?.trim().split(':') ?? [];
  const uid = Number(fields[2]);
  const gid = Number(fields[3]);
  if (result.status !== 0 || !Number.isInteger(uid) || !Number.isInteger(gid)) {
    throw new Error(
      'running as root, but there is no `postgres` system user to run PostgreSQL as ' +
        "(Debian's postgresql package creates it)",
    );
  }
  return { name: 'postgres', uid, gid };
}

/** ownDir creates `dir` (mode 0700) and hands it to `user`. */
export function ownDir(dir: string, user: ServiceUser | undefined): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (user) chownSync(dir, user.uid, user.gid);
}

/** canUse reports whether `user` can read, write and enter `dir` (every parent must let it through). */
export function canUse(dir: string, user: ServiceUser | undefined): boolean {
  if (!user) return true;
  const result = spawnSync('test', ['-r', dir, '-a', '-w', dir, '-a', '-x', dir], {
    uid: user.uid,
    gid: user.gid,
    cwd: '/',
  });
  return result.status === 0;
}

/** fallbackDataDir is where postgres' data goes when its user cannot reach the requested dir. */
export function fallbackDataDir(requested: string): string {
  const hash = createHash('sha256').update(requested).digest('hex').slice(0, 12);
  return join('/var/lib/cubicle', hash, 'postgres');
}

/**
 * socketDirFor returns `preferred` when a socket named `fileName` fits there, otherwise a fresh
 * short directory under /tmp (owned by `user`) that the caller removes on stop. With `gid`, the
 * directory is made the gate for that group's clients: owner `user`, group `gid`, mode 0710
 * (enter, never list or write). Without it a directory apart from the data stays 0700.
 */
export function socketDirFor(
  preferred: string,
  fileName: string,
  prefix: string,
  user: ServiceUser | undefined,
  gid?: number,
): { dir: string; isTemporary: boolean } {
  const fits = Buffer.byteLength(join(preferred, fileName)) <= MAX_SOCKET_PATH_BYTES;
  // postgres reads unix_socket_directories as a comma-separated list: keep paths plain.
  if (fits && !/[\s,"'\\]/.test(preferred)) {
    if (gid !== undefined) gateDir(preferred, user, gid);
    return { dir: preferred, isTemporary: false };
  }
  const dir = mkdtempSync(`/tmp/cubicle-${prefix}-`);
  if (user) chownSync(dir, user.uid, user.gid);
  if (gid !== undefined) gateDir(dir, user, gid);
  return { dir, isTemporary: true };
}

function gateDir(dir: string, user: ServiceUser | undefined, gid: number): void {
  mkdirSync(dir, { recursive: true, mode: 0o710 });
  chownSync(dir, user?.uid ?? process.getuid?.() ?? 0, gid);
  chmodSync(dir, 0o710);
}

/** tailFile returns the last `lines` lines of a log file (reading at most its last 64 KiB). */
export function tailFile(file: string, lines = 40): string[] {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return [];
  }
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, 64 * 1024);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    return buffer.toString('utf8').split('\n').filter(Boolean).slice(-lines);
  } finally {
    closeSync(fd);
  }
}
