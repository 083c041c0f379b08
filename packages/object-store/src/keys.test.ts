import { describe, expect, it } from 'vitest';
import { assertKey, assertPrefix, isKeyInvalid } from './keys.js';
import { ObjectStoreError } from './types.js';

const codeOf = (fn: () => void) => {
  try {
    fn();
    return 'ok';
  } catch (error) {
    return error instanceof ObjectStoreError ? error.code : String(error);
  }
};

describe('object keys', () => {
  it('accepts relative keys of safe segments', () => {
    for (const key of [
      'a',
      'profiles/p-1/manifest',
      'blobs/ab/0f3e.chunk',
      'x=1,y+2@z:3',
      'a/.b'.replace('.', '_'),
    ])
      expect(
        codeOf(() => assertKey(key)),
        key,
      ).toBe('ok');
  });

  it('refuses traversal, absolute paths, empty segments, dot segments and odd characters with object_key_invalid', () => {
    const bad = [
      '',
      '..',
      '../x',
      'a/../b',
      'a/..',
      '.',
      './a',
      '/abs',
      'a/',
      'a//b',
      '.hidden',
      'a/.tmp/b',
      'a\\b',
      'a b',
      'a~',
      'naïve',
      'a\0b',
      'x'.repeat(1025),
    ];
    for (const key of bad)
      expect(
        codeOf(() => assertKey(key)),
        JSON.stringify(key),
      ).toBe('object_key_invalid');
  });

  it('prefixes may be empty, end in / or stop mid-segment, but never reach outside', () => {
    for (const prefix of ['', 'a/', 'a/b', 'profiles/p-1/blobs/ab'])
      expect(
        codeOf(() => assertPrefix(prefix)),
        prefix,
      ).toBe('ok');
    for (const prefix of ['/', '/a', '../', 'a/../', '..', '.', 'a//', 'a/.', '.tmp/'])
      expect(
        codeOf(() => assertPrefix(prefix)),
        prefix,
      ).toBe('object_key_invalid');
  });

  it('isKeyInvalid tells a caller mistake from a store failure', () => {
    let caught: unknown;
    try {
      assertKey('../etc/passwd');
    } catch (error) {
      caught = error;
    }
    expect(isKeyInvalid(caught)).toBe(true);
    expect(isKeyInvalid(new ObjectStoreError('object_store_unavailable', 'down'))).toBe(false);
  });
});
