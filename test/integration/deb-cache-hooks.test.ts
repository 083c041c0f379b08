// The image builder's .deb cache hooks (scripts/images/rootfs.mjs): the cached .debs go into a
// rootfs as hard links and the downloaded ones come back as hard links, instead of mmdebstrap's
// sync-in/sync-out copies of the whole cache for every image. Run as mmdebstrap runs a hook:
// `sh -c HOOK exec ROOTFS`, in a tools dir whose path has a space and a quote.
import { execFileSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script of the bootstrap, no declarations
import { debCacheHooks } from '../../scripts/images/rootfs.mjs';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function store() {
  const root = mkdtempSync(join(tmpdir(), "cubicle deb's cache "));
  dirs.push(root);
  const cache = join(root, 'debs');
  const rootfs = join(root, 'work', 'rootfs');
  mkdirSync(cache, { recursive: true });
  mkdirSync(join(rootfs, 'var/cache/apt/archives'), { recursive: true });
  return { cache, rootfs, archives: join(rootfs, 'var/cache/apt/archives') };
}
const hook = (script: string, rootfs: string) => execFileSync('sh', ['-c', script, 'exec', rootfs]);
const hooksFor = debCacheHooks as (dir: string) => { linkIn: string; linkOut: string };

describe('image Debian layer: the .deb cache', () => {
  it('gives apt the cached .debs as links, and links back only the new ones', () => {
    const s = store();
    writeFileSync(join(s.cache, 'a_1_amd64.deb'), 'a');
    writeFileSync(join(s.cache, 'lock'), '');
    const hooks = hooksFor(s.cache);
    hook(hooks.linkIn, s.rootfs);
    expect(readdirSync(s.archives)).toEqual(['a_1_amd64.deb']);
    expect(statSync(join(s.archives, 'a_1_amd64.deb')).ino).toBe(
      statSync(join(s.cache, 'a_1_amd64.deb')).ino,
    );
    // apt downloads b, and replaces a by renaming a new file over it: the cache keeps its a.
    writeFileSync(join(s.archives, 'b_1_amd64.deb'), 'b');
    writeFileSync(join(s.archives, 'a.partial'), 'A');
    execFileSync('mv', [join(s.archives, 'a.partial'), join(s.archives, 'a_1_amd64.deb')]);
    hook(hooks.linkOut, s.rootfs);
    expect(readdirSync(s.cache).sort()).toEqual(['a_1_amd64.deb', 'b_1_amd64.deb', 'lock']);
    expect(readFileSync(join(s.cache, 'a_1_amd64.deb'), 'utf8')).toBe('a');
    expect(statSync(join(s.cache, 'b_1_amd64.deb')).ino).toBe(
      statSync(join(s.archives, 'b_1_amd64.deb')).ino,
    );
  });

  it('does nothing on an empty cache or rootfs, and fails when it cannot link', () => {
    const s = store();
    const hooks = hooksFor(s.cache);
    hook(hooks.linkIn, s.rootfs);
    hook(hooks.linkOut, s.rootfs);
    expect(readdirSync(s.archives)).toEqual([]);
    writeFileSync(join(s.cache, 'a_1_amd64.deb'), 'a');
    rmSync(s.archives, { recursive: true });
    expect(() => hook(hooks.linkIn, s.rootfs)).toThrow();
  });
});
