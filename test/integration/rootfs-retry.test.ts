import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script of the bootstrap, no declarations
import { buildRootfs } from '../../scripts/images/rootfs.mjs';

// The image builder's answer to a Debian mirror that fails for a moment (a fresh clone's bootstrap
// met `Clearsigned file isn't valid, got 'NOSPLIT'` from deb.debian.org): the build is tried again
// from an empty directory; a failure that is not the mirror's is not. mmdebstrap itself is stood in
// for by a script on PATH that fails the way apt does, then succeeds — the real one needs root and
// the network, and its own behaviour is not what is under test.

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** standIn puts an `mmdebstrap` on PATH that prints `failures[i]` and exits 25 on run i, then succeeds. */
function standIn(failures: string[]) {
  const root = mkdtempSync(join(tmpdir(), 'cubicle rootfs retry '));
  dirs.push(root);
  const bin = join(root, 'bin');
  mkdirSync(bin);
  const runs = join(root, 'runs');
  writeFileSync(runs, '');
  const script = [
    '#!/bin/sh',
    // The directory is the argument before the sources: the stand-in writes a file into it, as a
    // partial bootstrap would, so a retry must start from an empty one.
    `n=$(wc -l < "${runs}")`,
    `echo run >> "${runs}"`,
    'dir=""; prev=""; for a in "$@"; do case "$a" in deb\\ *) dir="$prev"; break;; esac; prev="$a"; done',
    'if [ -e "$dir/partial" ]; then echo "directory not empty" >&2; exit 1; fi',
    'mkdir -p "$dir" && touch "$dir/partial"',
    ...failures.map((message, i) => `if [ "$n" -eq ${i} ]; then echo "${message}"; exit 25; fi`),
    'exit 0',
  ].join('\n');
  writeFileSync(join(bin, 'mmdebstrap'), script);
  chmodSync(join(bin, 'mmdebstrap'), 0o755);
  return { root, bin, runs: () => readFileSync(runs, 'utf8').split('\n').filter(Boolean).length };
}

async function build(stand: ReturnType<typeof standIn>) {
  const path = process.env.PATH;
  process.env.PATH = `${stand.bin}:${path}`;
  const lines: string[] = [];
  try {
    await buildRootfs(join(stand.root, 'rootfs'), {
      packages: ['xvfb'],
      login: { name: 'cubicle', home: '/home/cubicle' },
      epoch: 0,
      debCache: join(stand.root, 'debs'),
      logFile: join(stand.root, 'build.log'),
      log: (line: string) => lines.push(line),
      retryDelayMs: 10,
    });
  } finally {
    process.env.PATH = path;
  }
  return lines;
}

describe('image Debian layer: a failing mirror', () => {
  it('is tried again from an empty directory, and the build succeeds', async () => {
    const stand = standIn([
      "E: Err:1 http://deb.debian.org/debian bookworm InRelease\\n  Clearsigned file isn't valid, got 'NOSPLIT'",
    ]);
    const lines = await build(stand);
    expect(stand.runs()).toBe(2);
    expect(lines.join('\n')).toMatch(/Debian mirror failed \(attempt 1\)/);
    expect(existsSync(join(stand.root, 'rootfs', 'partial'))).toBe(true);
  });

  it('gives up after three attempts with the mirror’s message', async () => {
    const nosplit = "Clearsigned file isn't valid, got 'NOSPLIT'";
    const stand = standIn([nosplit, nosplit, nosplit]);
    await expect(build(stand)).rejects.toThrow(/NOSPLIT/);
    expect(stand.runs()).toBe(3);
  });

  it('does not retry a failure that is not the mirror’s', async () => {
    const stand = standIn(['E: Unable to locate package no-such-package']);
    await expect(build(stand)).rejects.toThrow(/no-such-package/);
    expect(stand.runs()).toBe(1);
  });
});
