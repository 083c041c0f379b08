import { createHash, randomBytes } from 'node:crypto';
import { linkSync, rmSync } from 'node:fs';
import { access, chmod, constants, link, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ARCHIVE_HOST_STAGE_NAME } from '@cubicle/contract/guest';
import { ObjectStoreError } from '@cubicle/object-store';
import { guestSocketPath } from '../backend/endpoints.js';
import type { CacheScope } from './chunk-cache.js';
import { mapLimit } from './profile-objects.js';

// A local desktop's guest is reached through a unix socket on this machine, and its launcher
// binds a directory beside that socket's read-only into the sandbox (ARCHIVE_HOST_STAGE_NAME).
// Writing a restore's chunks there costs one decrypt and one file write each, where streaming
// them through the guest door costs an HTTP body, the guest's hash check and its own write; a
// fork of ten writes each chunk once and links it into the other nine stages.

/** Chunk files written or linked at once. */
const FILE_CONCURRENCY = 4;

/** ChunkSource answers a chunk's bytes (opened). */
export type ChunkSource = (hash: string) => Promise<Uint8Array>;

/**
 * hostStageOf answers the host stage of a guest at `endpoint` when it is a unix socket on this
 * machine whose launcher made one and this process may write it; null otherwise (a Pod or VM,
 * a desktop started before host stages, another machine's socket): the caller streams then.
 */
export async function hostStageOf(endpoint: string | null): Promise<string | null> {
  if (!endpoint) return null;
  let socket: string | null;
  try {
    socket = guestSocketPath(new URL(endpoint));
  } catch {
    return null;
  }
  if (!socket) return null;
  const dir = join(dirname(dirname(socket)), ARCHIVE_HOST_STAGE_NAME);
  try {
    // A link the launcher made in the session directory, which the sandbox cannot write
    // (start-sandbox.ts makeHostStage): the stage itself lives where its path names nothing.
    if (!(await stat(dir)).isDirectory()) return null;
    await access(dir, constants.W_OK | constants.X_OK);
    return dir;
  } catch {
    return null;
  }
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const codeOf = (err: unknown) => (err as NodeJS.ErrnoException).code;

/**
 * HostChunkFiles puts chunks into host stages: the first time a chunk is placed it is linked from
 * the machine's chunk cache (`cached`) when that holds it; otherwise it is read from its source,
 * checked against its id (the store's seal proves where a body was put, not that the desktop
 * which sent it at save told the truth about its hash, for a chunk stored before saves checked
 * it) and written 0644 by temp file + rename (the guest never sees half a chunk), into the cache
 * and linked from there when there is one. Every later placement links that file. clear()
 * removes every name it placed in a stage; a name left by a crash is a whole chunk, and goes with
 * the desktop's session directory.
 */
export class HostChunkFiles {
  /** chunk id → a path holding it (the first placement's). */
  private readonly written = new Map<string, Promise<string>>();
  private readonly placed = new Set<string>();

  constructor(
    readonly source: ChunkSource,
    private readonly cached?: CacheScope,
  ) {}

  /** place puts each of `hashes` into the stage `dir` (cached ones at once, then a few at a time). */
  async place(dir: string, hashes: readonly string[]): Promise<void> {
    const rest = await this.linkCached(dir, hashes);
    await mapLimit(rest, FILE_CONCURRENCY, (hash) => this.placeOne(dir, hash));
  }

  /**
   * linkCached links every chunk the cache holds into `dir` in one synchronous pass (a link is a
   * few microseconds; a thread-pool round trip per chunk costs far more on a loaded machine) and
   * answers the others.
   */
  private async linkCached(dir: string, hashes: readonly string[]): Promise<string[]> {
    const cached = this.cached;
    if (!cached || !(await cached.cache.isUsable())) return [...hashes];
    const rest: string[] = [];
    for (const hash of hashes) {
      const from = cached.cache.findSync(cached.tenantId, cached.keyOf(hash));
      const target = join(dir, hash);
      if (from === null) rest.push(hash);
      else
        try {
          linkSync(from, target);
          this.placed.add(target);
        } catch (err) {
          // Already there: a name in a stage is always a whole chunk. Else: written below.
          if (codeOf(err) !== 'EEXIST') rest.push(hash);
        }
    }
    return rest;
  }

  private async placeOne(dir: string, hash: string): Promise<void> {
    const target = join(dir, hash);
    const earlier = this.written.get(hash);
    if (earlier) {
      const from = await earlier;
      if (from === target) return;
      try {
        await link(from, target);
        this.placed.add(target);
        return;
      } catch (err) {
        // Already there: a name in a stage is always a whole chunk (temp file + rename).
        if (codeOf(err) === 'EEXIST') return;
        // Another filesystem (or the first file gone): write it again below.
      }
    }
    const writing = this.write(target, hash);
    if (!earlier) {
      this.written.set(hash, writing);
      writing.catch(() => this.written.delete(hash));
    }
    await writing;
  }

  private async write(target: string, hash: string): Promise<string> {
    const cached = this.cached;
    const hit = cached && (await cached.cache.find(cached.tenantId, cached.keyOf(hash)));
    if (hit && (await this.linkFrom(hit, target))) return target;
    const bytes = await this.source(hash);
    if (sha256(bytes) !== hash)
      throw new ObjectStoreError(
        'object_integrity',
        `stored chunk ${hash} does not hash to its id`,
      );
    const kept = cached && (await cached.cache.add(cached.tenantId, cached.keyOf(hash), bytes));
    if (kept && (await this.linkFrom(kept, target))) return target;
    const temp = join(dirname(target), `.${hash}.${randomBytes(4).toString('hex')}.tmp`);
    try {
      await writeFile(temp, bytes, { flag: 'wx' });
      // Whatever the umask: the guest reads it as another user (the directory keeps others out).
      await chmod(temp, 0o644);
      await rename(temp, target);
    } catch (err) {
      await unlink(temp).catch(() => undefined);
      throw err;
    }
    this.placed.add(target);
    return target;
  }

  /**
   * linkFrom links a cached chunk in as `target`; false when it cannot (another filesystem, the
   * entry trimmed meanwhile): the caller writes it instead. A name already there is a whole chunk.
   */
  private async linkFrom(from: string, target: string): Promise<boolean> {
    try {
      await link(from, target);
      this.placed.add(target);
      return true;
    } catch (err) {
      return codeOf(err) === 'EEXIST';
    }
  }

  /**
   * clear removes every chunk this placed, from every stage (after the applies), in one
   * synchronous pass: an unlink is microseconds, a thread-pool round trip per name is not.
   */
  clear(): Promise<void> {
    const names = [...this.placed];
    this.placed.clear();
    this.written.clear();
    for (const name of names)
      try {
        rmSync(name, { force: true });
      } catch {
        // left for the session directory's removal with the desktop
      }
    return Promise.resolve();
  }
}
