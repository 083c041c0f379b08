import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeTar } from './write-tar.js';

let dir = '';
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

describe('writeTar', () => {
  it('writes an archive GNU tar lists and extracts byte for byte', () => {
    dir = mkdtempSync(join(tmpdir(), 'tar-test-'));
    const big = Buffer.alloc(1300, 7);
    const archive = writeTar([
      { name: 'trajectory.jsonl', data: Buffer.from('{"a":1}\n') },
      { name: '000001-before.png', data: big },
      { name: 'empty', data: Buffer.alloc(0) },
    ]);
    expect(archive.length % 512).toBe(0);
    writeFileSync(join(dir, 'a.tar'), archive);
    const listing = execFileSync('tar', ['-tf', join(dir, 'a.tar')], { encoding: 'utf8' });
    expect(listing.trim().split('\n')).toEqual(['trajectory.jsonl', '000001-before.png', 'empty']);
    execFileSync('tar', ['-xf', join(dir, 'a.tar'), '-C', dir]);
    expect(readFileSync(join(dir, '000001-before.png')).equals(big)).toBe(true);
    expect(readFileSync(join(dir, 'trajectory.jsonl'), 'utf8')).toBe('{"a":1}\n');
  });

  it('refuses names that do not fit the header', () => {
    expect(() => writeTar([{ name: 'x'.repeat(101), data: Buffer.alloc(0) }])).toThrow(/too long/);
  });
});
