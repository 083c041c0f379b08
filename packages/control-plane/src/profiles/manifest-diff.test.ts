import { describe, expect, it } from 'vitest';
import { ARCHIVE_CHUNK_BYTES, type ArchiveEntry } from '@cubicle/contract/guest';
import { chunkSize, diffManifests } from './manifest-diff.js';

const h = (c: string) => c.repeat(64);
const file = (path: string, chunks: string[], size = 10, mode = 0o644): ArchiveEntry => ({
  type: 'file',
  path,
  mode,
  size,
  mtime_ms: 1,
  hash: h(chunks.join('').slice(0, 1) || 'e'),
  chunks: chunks.map(h),
});

describe('diffManifests', () => {
  it('uploads only chunks the previous version did not store', () => {
    const before = [file('Documents/a', ['a']), file('Documents/b', ['b'])];
    const after = [
      file('Documents/a', ['a']),
      { ...file('Documents/b', ['c']), hash: h('c') },
      file('Documents/new', ['d']),
    ];
    const d = diffManifests(before, after);
    expect(d.added).toEqual(['Documents/new']);
    expect(d.changed).toEqual(['Documents/b']);
    expect(d.removed).toEqual([]);
    expect(d.upload.map((u) => u.hash)).toEqual([h('c'), h('d')]);
    expect(d.uploadBytes).toBe(20);
  });

  it('uploads a chunk shared by two new files once, and nothing for a rename of stored content', () => {
    const before = [file('Documents/old-name', ['a'])];
    const after = [file('Documents/new-name', ['a']), file('x/1', ['z']), file('x/2', ['z'])];
    const d = diffManifests(before, after);
    expect(d.removed).toEqual(['Documents/old-name']);
    expect(d.added).toEqual(['Documents/new-name', 'x/1', 'x/2']);
    expect(d.upload).toEqual([{ path: 'x/1', index: 0, hash: h('z'), size: 10 }]);
  });

  it('treats a mode change as a change that uploads nothing, and a touched file as none', () => {
    const before = [file('a', ['a'])];
    const d = diffManifests(before, [file('a', ['a'], 10, 0o600)]);
    expect(d.changed).toEqual(['a']);
    expect(d.upload).toEqual([]);
    const touched = diffManifests(before, [{ ...file('a', ['a']), mtime_ms: 99 }]);
    expect(touched.changed).toEqual([]);
  });

  it('sizes the chunks of a big file: full ones, then the rest', () => {
    const size = ARCHIVE_CHUNK_BYTES * 2 + 5;
    const d = diffManifests([], [file('big', ['1', '2', '3'], size)]);
    expect(d.upload.map((u) => u.size)).toEqual([ARCHIVE_CHUNK_BYTES, ARCHIVE_CHUNK_BYTES, 5]);
    expect(chunkSize(size, 3)).toBe(0);
  });

  it('sees a directory turned into a symlink as a change', () => {
    const before: ArchiveEntry[] = [{ type: 'directory', path: 'd', mode: 0o755, mtime_ms: 1 }];
    const after: ArchiveEntry[] = [{ type: 'symlink', path: 'd', target: 'e', mtime_ms: 1 }];
    expect(diffManifests(before, after).changed).toEqual(['d']);
  });
});
