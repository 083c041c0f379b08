import { describe, expect, it } from 'vitest';
import {
  FILE_READ_MAX_BYTES,
  FileDeleteRequest,
  FileListResponse,
  FileReadRequest,
  FileReadResponse,
  FileStat,
  FileWriteRequest,
} from './files.js';

describe('file requests', () => {
  it('fills read and write defaults', () => {
    expect(FileReadRequest.parse({ path: '/etc/hostname' })).toEqual({
      path: '/etc/hostname',
      offset: 0,
      encoding: 'utf8',
    });
    expect(FileWriteRequest.parse({ path: '/tmp/a.txt', content: 'hi' })).toEqual({
      path: '/tmp/a.txt',
      content: 'hi',
      encoding: 'utf8',
      atomic: true,
      create_parents: false,
    });
  });

  it('bounds ranges and rejects relative paths, NUL bytes and bad modes', () => {
    expect(FileReadRequest.safeParse({ path: '/a', length: FILE_READ_MAX_BYTES + 1 }).success).toBe(
      false,
    );
    expect(FileReadRequest.safeParse({ path: '/a', offset: -1 }).success).toBe(false);
    expect(FileReadRequest.safeParse({ path: 'a.txt' }).success).toBe(false);
    expect(FileReadRequest.safeParse({ path: '/a\0b' }).success).toBe(false);
    expect(FileWriteRequest.safeParse({ path: '/a', content: '', mode: '0755' }).success).toBe(
      true,
    );
    expect(FileWriteRequest.safeParse({ path: '/a', content: '', mode: '999' }).success).toBe(
      false,
    );
    expect(FileWriteRequest.safeParse({ path: '/a', content: '', encoding: 'hex' }).success).toBe(
      false,
    );
  });

  it('refuses to delete the root directory', () => {
    expect(FileDeleteRequest.safeParse({ path: '/', recursive: true }).success).toBe(false);
    expect(FileDeleteRequest.parse({ path: '/tmp/x' })).toEqual({
      path: '/tmp/x',
      recursive: false,
      missing_ok: false,
    });
  });
});

describe('file responses', () => {
  const mtime = '2026-11-29T21:00:00.000Z';

  it('accepts read, stat and list answers', () => {
    expect(
      FileReadResponse.safeParse({
        path: '/a',
        encoding: 'base64',
        content: 'AA==',
        offset: 10,
        length: 1,
        size: 11,
        eof: true,
      }).success,
    ).toBe(true);
    const stat = { path: '/a', type: 'file', size: 11, mode: '644', mtime, uid: 0, gid: 0 };
    expect(FileStat.safeParse(stat).success).toBe(true);
    expect(FileStat.safeParse({ ...stat, type: 'fifo' }).success).toBe(false);
    const list = {
      path: '/tmp',
      entries: [{ name: 'a', type: 'directory', size: 4096, mode: '755', mtime }],
      truncated: false,
    };
    expect(FileListResponse.safeParse(list).success).toBe(true);
  });
});
