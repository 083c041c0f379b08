import { randomBytes } from 'node:crypto';
import { lstatSync } from 'node:fs';
import { chmod, lstat, mkdir, readdir, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { assertKey, assertPrefix } from '@cubicle/object-store';

// Restoring a 50 MB profile from the store costs ~160 ms of CPU (read, open the seal, hash each
// chunk, write it into the host stage), seconds on a loaded machine. A chunk a desktop of this
// machine saved or restored before is kept here, opened and checked against its id, so the next
// restore of the same profile or snapshot links it into the host stage instead: no read, no
// decrypt, no hash, no write.

/** Default bound of one machine's cache (all tenants): oldest entries go past it. */
export const CHUNK_CACHE_MAX_BYTES = 1024 * 1024 * 1024;

const TENANT_ID = /^[A-Za-z0-9_-]{1,64}$/;
const codeOf = (err: unknown) => (err as NodeJS.ErrnoException).code;

/**
 * ChunkCache holds plaintext chunks on this machine under `<root>/<tenant id>/<object key>`: the
 * same key the sealed object has in the tenant's store, so an entry is found only by a restore of
 * that tenant's profile or snapshot (its key names the row), and deleting a profile or snapshot
 * drops its prefix here as in the store. Entries are only ever added with bytes already checked
 * against their content id (the caller hashes them), by temp file + rename: a name here is a
 * whole, true chunk, and a restore links it without hashing again.
 *
 * The root must be a directory of this process's uid that no one else may enter (made 0700 when
 * absent); anything else (a name someone else made in /tmp) turns the cache off rather than put
 * plaintext where another user can read or plant it. Files are 0644 so a sandbox reads the link
 * in its read-only host stage; the directories keep everyone else out. Bounded by `maxBytes`:
 * past it the oldest written entries are removed (in the background, never on a restore's path).
 */
export class ChunkCache {
  private made: Promise<void> | undefined;
  private addedSinceTrim = Number.POSITIVE_INFINITY;
  private trimming: Promise<void> | undefined;

  constructor(
    readonly root: string,
    readonly maxBytes: number = CHUNK_CACHE_MAX_BYTES,
  ) {}

  /**
   * isUsable answers whether the root is ours alone (made on first use). Checked on every use (one
   * lstat): a root whose mode or owner changed since turns the cache off at once.
   */
  async isUsable(): Promise<boolean> {
    this.made ??= mkdir(this.root, { recursive: true, mode: 0o700 }).then(
      () => undefined,
      () => undefined,
    );
    await this.made;
    const info = await lstat(this.root).catch(() => null);
    const uid = process.getuid?.();
    return (
      !!info &&
      info.isDirectory() &&
      (uid === undefined || info.uid === uid) &&
      (info.mode & 0o077) === 0
    );
  }

  private pathOf(tenantId: string, key: string): string {
    if (!TENANT_ID.test(tenantId)) throw new Error(`not a tenant id: ${JSON.stringify(tenantId)}`);
    assertKey(key);
    return join(this.root, tenantId, key);
  }

  /** find answers the path of a cached chunk, or null. */
  async find(tenantId: string, key: string): Promise<string | null> {
    if (!(await this.isUsable())) return null;
    const path = this.pathOf(tenantId, key);
    const info = await lstat(path).catch(() => null);
    return info?.isFile() ? path : null;
  }

  /**
   * findSync is find in one go, for a caller that checked isUsable just before: a restore looks
   * up every chunk of a profile at once, and a thread-pool round trip per chunk costs more than
   * the lstat on a loaded machine.
   */
  findSync(tenantId: string, key: string): string | null {
    const path = this.pathOf(tenantId, key);
    return lstatSync(path, { throwIfNoEntry: false })?.isFile() ? path : null;
  }

  /**
   * add keeps `bytes` (already checked against the chunk's id by the caller) as the entry of
   * `key`; answers its path, or null when the cache is off or the write failed (a cache only).
   */
  async add(tenantId: string, key: string, bytes: Uint8Array): Promise<string | null> {
    if (!(await this.isUsable())) return null;
    const path = this.pathOf(tenantId, key);
    const temp = join(dirname(path), `.${randomBytes(6).toString('hex')}.tmp`);
    try {
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
      await writeFile(temp, bytes, { flag: 'wx', mode: 0o644 });
      await chmod(temp, 0o644); // whatever the umask
      await rename(temp, path);
    } catch {
      await unlink(temp).catch(() => undefined);
      return null;
    }
    this.addedSinceTrim += bytes.byteLength;
    if (this.addedSinceTrim > this.maxBytes / 8 && !this.trimming) {
      this.addedSinceTrim = 0;
      this.trimming = this.trim()
        .catch(() => undefined)
        .finally(() => (this.trimming = undefined));
    }
    return path;
  }

  /** drop removes entries (chunks a profile no longer uses). */
  async drop(tenantId: string, keys: readonly string[]): Promise<void> {
    if (!(await this.isUsable())) return;
    for (const key of keys) await unlink(this.pathOf(tenantId, key)).catch(() => undefined);
  }

  /** dropPrefix removes everything under a whole-segment prefix (`profiles/<id>/`). */
  async dropPrefix(tenantId: string, prefix: string): Promise<void> {
    if (!(await this.isUsable())) return;
    assertPrefix(prefix);
    if (!prefix.endsWith('/')) throw new Error(`not a whole-segment prefix: ${prefix}`);
    if (!TENANT_ID.test(tenantId)) throw new Error(`not a tenant id: ${JSON.stringify(tenantId)}`);
    await rm(join(this.root, tenantId, prefix), { recursive: true, force: true });
  }

  /** trim removes the oldest entries until the cache holds at most 3/4 of maxBytes. */
  async trim(): Promise<void> {
    if (!(await this.isUsable())) return;
    const files: { path: string; size: number; mtimeMs: number }[] = [];
    const walk = async (dir: string): Promise<void> => {
      const names = await readdir(dir).catch((err: unknown) => {
        if (codeOf(err) === 'ENOENT') return [];
        throw err;
      });
      for (const name of names) {
        const path = join(dir, name);
        const info = await lstat(path).catch(() => null);
        if (info?.isDirectory()) await walk(path);
        else if (info?.isFile()) files.push({ path, size: info.size, mtimeMs: info.mtimeMs });
      }
    };
    await walk(this.root);
    let total = files.reduce((n, f) => n + f.size, 0);
    if (total <= this.maxBytes) return;
    files.sort((a, b) => a.mtimeMs - b.mtimeMs);
    for (const f of files) {
      if (total <= (this.maxBytes * 3) / 4) break;
      await unlink(f.path).catch(() => undefined);
      total -= f.size;
    }
  }
}

let shared: ChunkCache | undefined;

/** hostChunkCache is this process's cache, in the machine's temp directory, per uid. */
export function hostChunkCache(): ChunkCache {
  shared ??= new ChunkCache(join(tmpdir(), `cubicle-chunks-${process.getuid?.() ?? 'user'}`));
  return shared;
}

/** A cache and where one restore's chunks are in it: a tenant, and the object key of a chunk. */
export interface CacheScope {
  cache: ChunkCache;
  tenantId: string;
  keyOf(hash: string): string;
}
