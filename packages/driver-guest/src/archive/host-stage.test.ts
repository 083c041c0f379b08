import { createHash } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ArchiveApplyRequest, ArchiveScanRequest } from '@cubicle/contract/guest';
import { applyManifest, needChunks } from './apply-manifest.js';
import { scanHome } from './scan-home.js';
import { hostStageOf } from './staging.js';

const dirs: string[] = [];
const newDir = async (name: string) => {
  const dir = await mkdtemp(join(tmpdir(), `archive-${name}-`));
  dirs.push(dir);
  return dir;
};
afterEach(async () => {
  for (const d of dirs.splice(0)) {
    await chmod(d, 0o700).catch(() => undefined);
    await rm(d, { recursive: true, force: true });
  }
});

const PATHS = ['Documents'];
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

describe("the host's stage (a local sandbox's read-only chunk directory)", () => {
  it('counts its chunks as staged and applies from it by copy, leaving it as it was', async () => {
    const from = await newDir('from');
    await mkdir(join(from, 'Documents'));
    const one = Buffer.from('one, from the host');
    const two = Buffer.alloc(3000, 9);
    await writeFile(join(from, 'Documents/one.txt'), one);
    await writeFile(join(from, 'Documents/two.bin'), two);
    const m = await scanHome(from, ArchiveScanRequest.parse({ paths: PATHS }));

    // What the control plane does on the host: each chunk under its id, then read-only.
    const host = await newDir('host-stage');
    for (const b of [one, two]) await writeFile(join(host, sha256(b)), b, { mode: 0o644 });
    await chmod(host, 0o555);

    const home = await newDir('home');
    expect(await needChunks(home, { entries: m.entries }, host)).toEqual({ needed: [] });
    expect((await needChunks(home, { entries: m.entries })).needed).toHaveLength(2);
    const applied = await applyManifest(
      home,
      ArchiveApplyRequest.parse({ paths: PATHS, entries: m.entries }),
      host,
    );
    expect(applied.written).toBe(2);
    expect(await readFile(join(home, 'Documents/one.txt'))).toEqual(one);
    expect(await readFile(join(home, 'Documents/two.bin'))).toEqual(two);
    // Copied, not moved: the host's files are still there for the host to remove.
    expect((await stat(join(host, sha256(one)))).isFile()).toBe(true);
  });

  it('is found only as a real directory', async () => {
    const dir = await newDir('stage');
    expect(await hostStageOf(dir)).toBe(dir);
    expect(await hostStageOf(join(dir, 'missing'))).toBeNull();
    await symlink(dir, join(dir, 'link'));
    expect(await hostStageOf(join(dir, 'link'))).toBeNull();
  });
});
