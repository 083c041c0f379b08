import {
  mkdtemp,
  mkdir,
  readFile,
  readlink,
  rm,
  stat,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ARCHIVE_CHUNK_BYTES,
  ArchiveApplyRequest,
  ArchiveScanRequest,
  type ArchiveEntry,
} from '@cubicle/contract/guest';
import { applyManifest, needChunks } from './apply-manifest.js';
import { readChunks } from './read-chunks.js';
import { scanHome } from './scan-home.js';
import { stageChunks } from './staging.js';

const homes: string[] = [];
const newHome = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'archive-home-'));
  homes.push(dir);
  return dir;
};
afterEach(async () => {
  for (const h of homes.splice(0)) await rm(h, { recursive: true, force: true });
});

const PATHS = ['.config/chromium', 'Documents'];
const scan = (home: string, previous: ArchiveEntry[] = []) =>
  scanHome(home, ArchiveScanRequest.parse({ paths: PATHS, previous }));

/** copyHome moves a manifest from one home to another through the guest operations only. */
async function copyHome(from: string, to: string, entries: ArchiveEntry[]) {
  const { needed } = await needChunks(to, { entries });
  const refs = entries.flatMap((e) =>
    e.type === 'file' ? e.chunks.map((hash, index) => ({ path: e.path, index, hash })) : [],
  );
  for (const hash of needed) {
    const ref = refs.find((r) => r.hash === hash)!;
    const { blobs } = await readChunks(from, { chunks: [ref] });
    await stageChunks(to, { blobs });
  }
  return applyManifest(to, ArchiveApplyRequest.parse({ paths: PATHS, entries }));
}

describe('guest archive', () => {
  it('round-trips files, modes, big files and links that stay inside, and leaves locks and sockets out', async () => {
    const a = await newHome();
    await mkdir(join(a, '.config/chromium/Default'), { recursive: true });
    await writeFile(join(a, '.config/chromium/Default/Cookies'), 'cookie-db');
    await writeFile(join(a, '.config/chromium/Local State'), '{"k":1}', { mode: 0o600 });
    await symlink('myhost-123', join(a, '.config/chromium/SingletonLock'));
    await symlink('/etc/passwd', join(a, '.config/chromium/escape'));
    await symlink('Default/Cookies', join(a, '.config/chromium/inside'));
    await mkdir(join(a, 'Documents'));
    const big = Buffer.alloc(ARCHIVE_CHUNK_BYTES + 1000, 7);
    await writeFile(join(a, 'Documents/big.bin'), big);
    await writeFile(join(a, 'Documents/run.sh'), '#!/bin/sh\n', { mode: 0o750 });
    const sock = createServer().listen(join(a, 'Documents/app.sock'));
    try {
      const m = await scan(a);
      const paths = m.entries.map((e) => e.path);
      expect(paths).not.toContain('.config/chromium/SingletonLock');
      expect(paths).not.toContain('Documents/app.sock');
      expect(m.skipped.map((s) => s.path)).toEqual(
        expect.arrayContaining(['.config/chromium/SingletonLock', 'Documents/app.sock']),
      );
      const bigEntry = m.entries.find((e) => e.path === 'Documents/big.bin');
      expect(bigEntry?.type === 'file' && bigEntry.chunks.length).toBe(2);

      const b = await newHome();
      await mkdir(join(b, 'Documents'), { recursive: true });
      await writeFile(join(b, 'Documents/stale.txt'), 'not in the manifest');
      const applied = await copyHome(a, b, m.entries);
      expect(applied.deleted).toBe(1);
      expect(applied.skipped.map((s) => s.path)).toEqual(['.config/chromium/escape']);
      expect(await readFile(join(b, '.config/chromium/Default/Cookies'), 'utf8')).toBe('cookie-db');
      expect((await stat(join(b, '.config/chromium/Local State'))).mode & 0o777).toBe(0o600);
      expect((await stat(join(b, 'Documents/run.sh'))).mode & 0o777).toBe(0o750);
      expect((await readFile(join(b, 'Documents/big.bin'))).equals(big)).toBe(true);
      expect(await readlink(join(b, '.config/chromium/inside'))).toBe('Default/Cookies');
      await expect(stat(join(b, 'Documents/stale.txt'))).rejects.toThrow();
      await expect(stat(join(b, '.cubicle-archive'))).rejects.toThrow(); // staging cleared

      // The restored home scans to the same manifest (the links that left the home excepted).
      const again = await scan(b);
      const strip = (es: ArchiveEntry[]) =>
        es.filter((e) => e.path !== '.config/chromium/escape' && e.type !== 'directory');
      expect(strip(again.entries)).toEqual(strip(m.entries));
    } finally {
      sock.close();
    }
  });

  it('rescans incrementally: only changed files are read', async () => {
    const a = await newHome();
    await mkdir(join(a, 'Documents'), { recursive: true });
    await writeFile(join(a, 'Documents/one.txt'), 'one');
    await writeFile(join(a, 'Documents/two.txt'), 'two');
    const first = await scan(a);
    expect(first.hashed_bytes).toBe(6);
    await writeFile(join(a, 'Documents/two.txt'), 'two, changed');
    await utimes(join(a, 'Documents/two.txt'), new Date(), new Date(Date.now() + 5000));
    const second = await scan(a, first.entries);
    expect(second.hashed_bytes).toBe('two, changed'.length);
  });

  it('refuses to apply before touching anything when a chunk is missing', async () => {
    const a = await newHome();
    await mkdir(join(a, 'Documents'), { recursive: true });
    await writeFile(join(a, 'Documents/one.txt'), 'one');
    const m = await scan(a);
    const b = await newHome();
    await mkdir(join(b, 'Documents'), { recursive: true });
    await writeFile(join(b, 'Documents/keep.txt'), 'still here');
    await expect(
      applyManifest(b, ArchiveApplyRequest.parse({ paths: PATHS, entries: m.entries })),
    ).rejects.toMatchObject({ code: 'conflict' });
    expect(await readFile(join(b, 'Documents/keep.txt'), 'utf8')).toBe('still here');
  });

  it('never writes through a symlinked directory', async () => {
    const a = await newHome();
    await mkdir(join(a, 'Documents'), { recursive: true });
    await writeFile(join(a, 'Documents/one.txt'), 'one');
    const m = await scan(a);
    const outside = await newHome();
    const b = await newHome();
    await symlink(outside, join(b, 'Documents'));
    await copyHome(a, b, m.entries);
    // The link was replaced by a real directory; nothing landed outside.
    expect((await stat(join(outside))).isDirectory()).toBe(true);
    await expect(stat(join(outside, 'one.txt'))).rejects.toThrow();
    expect(await readFile(join(b, 'Documents/one.txt'), 'utf8')).toBe('one');
  });
});
