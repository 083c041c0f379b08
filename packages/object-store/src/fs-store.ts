import { randomBytes } from 'node:crypto';
import {
  chmod,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rmdir,
  stat,
  unlink,
} from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { assertKey, assertPrefix, keyConflict } from './keys.js';
import { ObjectStoreError, type ObjectInfo, type ObjectStore } from './types.js';

/** FsStoreConfig: objects as files under `root` (the embedded default: `.cubicle/objects`). */
export interface FsStoreConfig {
  kind: 'fs';
  root: string;
}

// Layout: key `a/b/c` is the file `<root>/a/b/c~`. Keys never contain `~` (keys.ts), so an
// object's file never collides with the directory of a longer key (`a/b` and `a/b/c` may both
// exist, as on S3). Writes go to `<root>/.tmp/` first (keys never start a segment with `.`, so
// list never sees a temp file) and are renamed into place: a reader sees the whole old object
// or the whole new one, and a crash leaves at most an orphan in `.tmp`.
const OBJECT_MARK = '~';
const TMP_DIR = '.tmp';

/**
 * Modes: private to this user, unless the root directory is setgid (`npm start` as root makes
 * it so, group = the unprivileged API's): then the worker and the API share every object through
 * that group. Set with chmod after creation, since the process umask would drop group write.
 */
interface Modes {
  file: number;
  dir: number;
  isShared: boolean;
}
const PRIVATE: Modes = { file: 0o600, dir: 0o700, isShared: false };
const SHARED: Modes = { file: 0o660, dir: 0o2770, isShared: true };

const isMissing = (error: unknown) =>
  (error as NodeJS.ErrnoException).code === 'ENOENT' ||
  (error as NodeJS.ErrnoException).code === 'ENOTDIR';

const unavailable = (what: string, error: unknown) =>
  new ObjectStoreError(
    'object_store_unavailable',
    `object store (fs) ${what} failed: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    { cause: error },
  );

/** createFsStore keeps objects under config.root; the directory is made on first write. */
export function createFsStore(config: FsStoreConfig): ObjectStore {
  const root = config.root;
  const fileOf = (key: string) => join(root, ...key.split('/')) + OBJECT_MARK;
  let known: Modes | undefined;
  async function modes(): Promise<Modes> {
    if (known) return known;
    try {
      known = ((await stat(root)).mode & 0o2000) !== 0 ? SHARED : PRIVATE;
      return known;
    } catch {
      return PRIVATE; // no root yet: it is made private, and looked at again next time
    }
  }

  /** makeDirs is mkdir -p with the store's directory mode on every directory it makes. */
  async function makeDirs(dir: string): Promise<void> {
    const mode = await modes();
    const made = await mkdir(dir, { recursive: true, mode: mode.dir });
    if (!made || !mode.isShared) return;
    // `made` is the first directory created; fix the mode of it and every one below it.
    for (let d = dir; d.length >= made.length; d = dirname(d)) await chmod(d, mode.dir);
  }

  async function writeTemp(body: Uint8Array): Promise<string> {
    const tmpDir = join(root, TMP_DIR);
    await makeDirs(tmpDir);
    const mode = await modes();
    const tmp = join(tmpDir, randomBytes(12).toString('hex'));
    const handle = await open(tmp, 'wx', mode.file);
    try {
      if (mode.isShared) await handle.chmod(mode.file);
      await handle.writeFile(body);
      // The data reaches the disk before the rename makes it visible: after a power cut the
      // key holds the old object or the new one, never a truncated file.
      await handle.sync();
    } catch (error) {
      await handle.close().catch(() => undefined);
      await unlink(tmp).catch(() => undefined);
      throw error;
    }
    await handle.close();
    return tmp;
  }

  async function syncDir(dir: string) {
    const handle = await open(dir, 'r').catch(() => undefined);
    await handle?.sync().catch(() => undefined);
    await handle?.close().catch(() => undefined);
  }

  /** Refuses `a/b` under an object `a`, or `a` over objects `a/…` (keys.ts keyConflict). */
  async function assertNoConflict(key: string): Promise<void> {
    const segments = key.split('/');
    for (let i = 1; i < segments.length; i += 1) {
      const ancestor = segments.slice(0, i).join('/');
      const info = await stat(fileOf(ancestor)).catch(() => undefined);
      if (info?.isFile()) throw keyConflict(key, ancestor);
    }
    const below = await readdir(join(root, ...segments)).catch(() => []);
    if (below.length > 0) throw keyConflict(key, `${key}/…`);
  }

  async function put(key: string, body: Uint8Array): Promise<void> {
    assertKey(key);
    await assertNoConflict(key);
    const file = fileOf(key);
    let tmp: string | undefined;
    try {
      tmp = await writeTemp(body);
      // A concurrent delete may prune the parent between mkdir and rename: make it again once.
      for (let attempt = 0; ; attempt += 1) {
        await makeDirs(dirname(file));
        try {
          await rename(tmp, file);
          break;
        } catch (error) {
          if (attempt >= 2 || (error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        }
      }
      tmp = undefined;
      await syncDir(dirname(file));
    } catch (error) {
      if (tmp) await unlink(tmp).catch(() => undefined);
      throw unavailable(`put ${key}`, error);
    }
  }

  async function get(key: string): Promise<Uint8Array> {
    assertKey(key);
    try {
      // A view, not a copy: readFile's buffer is this object's alone (a whole file, never pooled).
      const body = await readFile(fileOf(key));
      return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
    } catch (error) {
      if (isMissing(error)) throw new ObjectStoreError('object_not_found', `no object ${key}`);
      throw unavailable(`get ${key}`, error);
    }
  }

  async function head(key: string): Promise<ObjectInfo | undefined> {
    assertKey(key);
    try {
      const info = await stat(fileOf(key));
      return info.isFile() ? { key, size: info.size, modifiedAt: info.mtime } : undefined;
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw unavailable(`head ${key}`, error);
    }
  }

  /** Every object key under dir (relative to root as `base`), unsorted. */
  async function collect(dir: string, base: string, into: string[]): Promise<void> {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      if (isMissing(error)) return;
      throw error;
    }
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      if (entry.isDirectory()) {
        await collect(join(dir, entry.name), `${base}${entry.name}/`, into);
      } else if (entry.isFile() && entry.name.endsWith(OBJECT_MARK)) {
        into.push(base + entry.name.slice(0, -OBJECT_MARK.length));
      }
    }
  }

  async function* list(prefix: string): AsyncIterable<ObjectInfo> {
    assertPrefix(prefix);
    // Walk only the deepest directory the prefix names in full, then keep the keys that match.
    const base = prefix.slice(0, prefix.lastIndexOf('/') + 1);
    const keys: string[] = [];
    try {
      await collect(join(root, ...base.split('/').filter(Boolean)), base, keys);
    } catch (error) {
      throw unavailable(`list ${prefix}`, error);
    }
    // Plain code-unit order is S3's order for ASCII keys (byte order of UTF-8).
    keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    for (const key of keys) {
      if (!key.startsWith(prefix)) continue;
      const info = await head(key);
      if (info) yield info;
    }
  }

  /** Removes the now-empty directories above a deleted object (best effort; a racing put remakes them). */
  async function prune(file: string) {
    for (
      let dir = dirname(file);
      dir.length > root.length && dir.startsWith(root);
      dir = dirname(dir)
    ) {
      try {
        await rmdir(dir);
      } catch {
        return;
      }
    }
  }

  async function remove(keys: readonly string[]): Promise<void> {
    for (const key of keys) assertKey(key);
    for (const key of keys) {
      const file = fileOf(key);
      try {
        await unlink(file);
      } catch (error) {
        if (isMissing(error)) continue;
        throw unavailable(`delete ${key}`, error);
      }
      await prune(file);
    }
  }

  return { kind: 'fs', put, get, head, list, delete: remove };
}
