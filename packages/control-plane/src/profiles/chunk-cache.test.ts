import { createHash } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ChunkCache, type CacheScope } from './chunk-cache.js';
import { checkedChunkSink } from './home-transfer.js';
import { HostChunkFiles } from './host-stage.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});
const newDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'chunk-cache-'));
  dirs.push(dir);
  return dir;
};
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const key = (profile: string, hash: string) => `profiles/${profile}/blobs/${hash}`;

describe('the machine chunk cache', () => {
  it("links a cached chunk into a stage without reading the store, and only for the same tenant's key", async () => {
    const cache = new ChunkCache(join(await newDir(), 'cache'));
    const stage = await newDir();
    const bytes = Buffer.from('a chunk of a saved profile');
    const hash = sha256(bytes);
    expect(await cache.add('tnt_a', key('prf_1', hash), bytes)).not.toBeNull();
    const reads: string[] = [];
    const source = (h: string) => (reads.push(h), Promise.resolve(bytes));
    const scope = (tenantId: string, profile: string): CacheScope => ({
      cache,
      tenantId,
      keyOf: (h) => key(profile, h),
    });

    const files = new HostChunkFiles(source, scope('tnt_a', 'prf_1'));
    await files.place(stage, [hash]);
    expect(reads).toEqual([]); // linked from the cache: not read, opened or hashed again
    expect(await readFile(join(stage, hash))).toEqual(bytes);
    const found = await cache.find('tnt_a', key('prf_1', hash));
    expect((await stat(join(stage, hash))).ino).toBe((await stat(found!)).ino);
    expect((await stat(join(stage, hash))).mode & 0o777).toBe(0o644);
    await files.clear();
    expect(await readdir(stage)).toEqual([]);
    expect(await cache.find('tnt_a', key('prf_1', hash))).toBe(found); // the entry stays

    // Another tenant, or another profile of the same tenant, never reaches that entry.
    for (const other of [scope('tnt_b', 'prf_1'), scope('tnt_a', 'prf_2')]) {
      const again = new HostChunkFiles(source, other);
      await again.place(stage, [hash]);
      await again.clear();
    }
    expect(reads).toEqual([hash, hash]);
  });

  it('keeps what a restore read from the store (checked first), so the next restore links it', async () => {
    const cache = new ChunkCache(join(await newDir(), 'cache'));
    const bytes = Buffer.alloc(70_000, 7);
    const hash = sha256(bytes);
    const scope: CacheScope = { cache, tenantId: 'tnt_a', keyOf: (h) => key('prf_1', h) };
    const reads: string[] = [];
    const source = (h: string) => (reads.push(h), Promise.resolve(bytes));
    for (let i = 0; i < 2; i++) {
      const files = new HostChunkFiles(source, scope);
      await files.place(await newDir(), [hash]);
      await files.clear();
    }
    expect(reads).toEqual([hash]);
    // A store body that is not its id is refused and never cached.
    const liar = new HostChunkFiles(() => Promise.resolve(Buffer.from('other')), scope);
    const claimed = sha256(Buffer.from('named'));
    await expect(liar.place(await newDir(), [claimed])).rejects.toMatchObject({
      code: 'object_integrity',
    });
    expect(await cache.find('tnt_a', key('prf_1', claimed))).toBeNull();
  });

  it('a save refuses a chunk whose bytes are not its id: nothing stored, nothing cached', async () => {
    const cache = new ChunkCache(join(await newDir(), 'cache'));
    const scope: CacheScope = { cache, tenantId: 'tnt_a', keyOf: (h) => key('prf_1', h) };
    const stored: string[] = [];
    const sink = checkedChunkSink(async (h) => {
      stored.push(h);
    }, scope);
    const bytes = Buffer.from('the file as scanned');
    const claimed = sha256(Buffer.from('what the desktop says it is'));
    await expect(sink({ hash: claimed, bytes })).rejects.toMatchObject({ code: 'conflict' });
    expect(stored).toEqual([]);
    expect(await cache.find('tnt_a', key('prf_1', claimed))).toBeNull();
    await sink({ hash: sha256(bytes), bytes });
    expect(stored).toEqual([sha256(bytes)]);
    expect(await readFile((await cache.find('tnt_a', key('prf_1', sha256(bytes))))!)).toEqual(
      bytes,
    );
  });

  it('is off when its root is not ours alone, drops prefixes, and trims the oldest past its bound', async () => {
    const root = join(await newDir(), 'cache');
    await mkdir(root, { mode: 0o755 });
    await chmod(root, 0o755); // someone else could read or plant entries: off
    const cache = new ChunkCache(root, 100);
    const bytes = Buffer.alloc(40, 1);
    expect(await cache.add('tnt_a', key('prf_1', sha256(bytes)), bytes)).toBeNull();
    await chmod(root, 0o700);
    const names = ['a', 'b', 'c'].map((n) => Buffer.alloc(40, n));
    for (const b of names) await cache.add('tnt_a', key('prf_1', sha256(b)), b);
    await cache.trim(); // 120 bytes > 100: the oldest go until at most 75 are left
    const left = await readdir(join(root, 'tnt_a', 'profiles', 'prf_1', 'blobs'));
    expect(left.length).toBe(1);
    await cache.dropPrefix('tnt_a', 'profiles/prf_1/');
    expect(await cache.find('tnt_a', key('prf_1', left[0]!))).toBeNull();
  });
});
