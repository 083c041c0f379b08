import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { chmod, mkdir, open, readFile, readdir, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type {
  SecretsDeleteRequest,
  SecretsResponse,
  SecretsWriteRequest,
} from '@cubicle/contract/guest';
import { AppError } from '@cubicle/contract/errors';
import { createRedactor, type Redactor } from '@cubicle/contract/redact';

/**
 * SANDBOX_SECRETS_DIR is where a sandboxed desktop mounts its per-sandbox secrets tmpfs (mode
 * 0700, the sandbox user's): the same path as the desktop launcher's SANDBOX_PATHS.secrets.
 */
export const SANDBOX_SECRETS_DIR = '/run/cubicle/secrets';

const NAME = /^[A-Z_][A-Z0-9_]{0,127}$/;
const VALUE_MAX_BYTES = 65_536;

/**
 * resolveSecretsDir picks the guest's secrets directory: GUEST_SECRETS_DIR from the desktop's
 * environment if set; else the sandbox's tmpfs when it is mounted; else, for a desktop that runs
 * unsandboxed on its host, a directory per display under XDG_RUNTIME_DIR (a tmpfs on systemd
 * hosts) or /dev/shm (a tmpfs on Linux), so values are never written to a disk.
 */
export function resolveSecretsDir(
  env: Record<string, string | undefined>,
  display: string,
): string {
  if (env.GUEST_SECRETS_DIR) return env.GUEST_SECRETS_DIR;
  if (existsSync(SANDBOX_SECRETS_DIR) && statSync(SANDBOX_SECRETS_DIR).isDirectory())
    return SANDBOX_SECRETS_DIR;
  const base =
    env.XDG_RUNTIME_DIR && existsSync(env.XDG_RUNTIME_DIR) ? env.XDG_RUNTIME_DIR : '/dev/shm';
  return join(base, `cubicle-secrets-${display.replace(/[^0-9]/g, '') || '0'}`);
}

/**
 * SecretFiles keeps one file per secret in a directory only its user can enter (0700), each
 * file 0600, written through a temporary file and a rename so a reader never sees half a value.
 */
export class SecretFiles {
  /** Every value written by this process (value → name), deleted ones too: what was seen stays redacted. */
  private readonly known = new Map<string, string>();
  private cached: Redactor | null = null;

  constructor(readonly dir: string) {}

  /**
   * redactor replaces every value this process has written, in any form, with
   * `[secret:NAME]` (recordings, see Recorder). Rebuilt only after a write.
   */
  redactor(): Redactor {
    this.cached ??= createRedactor([...this.known].map(([value, name]) => ({ name, value })));
    return this.cached;
  }

  /**
   * fullRedactor also covers the values on disk that this process did not write (a daemon
   * restarted after the delivery): for a whole archive, where reading the directory is cheap.
   */
  async fullRedactor(): Promise<Redactor> {
    for (const name of await this.names()) {
      const value = await readFile(join(this.dir, name), 'utf8').catch(() => '');
      if (value && !this.known.has(value)) this.remember(name, value);
    }
    return this.redactor();
  }

  private remember(name: string, value: string) {
    if (!value) return;
    this.known.set(value, name);
    this.cached = null;
  }

  /** ensureDir creates the directory 0700 (or tightens it) and refuses one owned by someone else. */
  private async ensureDir(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const info = await stat(this.dir);
    if (!info.isDirectory() || (process.getuid && info.uid !== process.getuid()))
      throw new AppError('forbidden', 'the secrets directory is not this user’s own directory');
    if ((info.mode & 0o777) !== 0o700) await chmod(this.dir, 0o700);
  }

  /** names lists the secrets present (files whose names are secret names). */
  async names(): Promise<string[]> {
    try {
      return (await readdir(this.dir)).filter((n) => NAME.test(n)).sort();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
  }

  async write(request: SecretsWriteRequest): Promise<SecretsResponse> {
    for (const { name, value } of request.secrets)
      if (Buffer.byteLength(value, 'utf8') > VALUE_MAX_BYTES)
        throw new AppError('payload_too_large', `secret ${name} is over ${VALUE_MAX_BYTES} bytes`);
    // Remembered before the files exist: an action recorded meanwhile is redacted already.
    for (const { name, value } of request.secrets) this.remember(name, value);
    await this.ensureDir();
    for (const { name, value } of request.secrets) await this.writeOne(name, value);
    if (request.exclusive) {
      const keep = new Set(request.secrets.map((s) => s.name));
      await this.remove((await readdir(this.dir)).filter((n) => !keep.has(n)));
    }
    return { dir: this.dir, names: await this.names() };
  }

  async delete(request: SecretsDeleteRequest): Promise<SecretsResponse> {
    await this.remove(request.names);
    return { dir: this.dir, names: await this.names() };
  }

  private async writeOne(name: string, value: string): Promise<void> {
    const tmp = join(this.dir, `.${name}.${randomBytes(6).toString('hex')}.tmp`);
    // O_EXCL with mode 0600: the file is never readable by others, not even for an instant.
    const handle = await open(tmp, 'wx', 0o600);
    try {
      await handle.writeFile(value, 'utf8');
    } finally {
      await handle.close();
    }
    try {
      await rename(tmp, join(this.dir, name));
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      throw err;
    }
  }

  private async remove(names: readonly string[]): Promise<void> {
    for (const name of names) {
      // Only our own entries: secret names and the temporary files of interrupted writes.
      if (!NAME.test(name) && !/^\.[A-Z0-9_]+\.[0-9a-f]{12}\.tmp$/.test(name)) continue;
      await unlink(join(this.dir, name)).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
      });
    }
  }
}
