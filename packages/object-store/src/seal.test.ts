import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openObject, SEAL_OVERHEAD, sealObject } from './seal.js';
import { ObjectStoreError } from './types.js';

const key = randomBytes(32);
const body = Buffer.from('PLAINTEXT-MARKER profile bytes');

const codeOf = (fn: () => unknown) => {
  try {
    fn();
    return 'ok';
  } catch (error) {
    return error instanceof ObjectStoreError ? error.code : String(error);
  }
};

describe('sealed objects', () => {
  it('round-trips and hides the plaintext', () => {
    const sealed = sealObject(key, 'ten_a', 'docs/1', body);
    expect(sealed.byteLength).toBe(body.length + SEAL_OVERHEAD);
    expect(Buffer.from(sealed).includes(Buffer.from('PLAINTEXT-MARKER'))).toBe(false);
    expect(Buffer.from(openObject(key, 'ten_a', 'docs/1', sealed)).equals(body)).toBe(true);
  });

  it('two seals of one body differ (fresh nonce)', () => {
    const a = sealObject(key, 'ten_a', 'k', body);
    const b = sealObject(key, 'ten_a', 'k', body);
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(false);
  });

  it('a body moved to another key, another tenant, or opened with another data key fails with object_integrity', () => {
    const sealed = sealObject(key, 'ten_a', 'docs/1', body);
    expect(codeOf(() => openObject(key, 'ten_a', 'docs/2', sealed))).toBe('object_integrity');
    expect(codeOf(() => openObject(key, 'ten_b', 'docs/1', sealed))).toBe('object_integrity');
    expect(codeOf(() => openObject(randomBytes(32), 'ten_a', 'docs/1', sealed))).toBe(
      'object_integrity',
    );
  });

  it('a flipped bit, a truncation or a foreign format fails with object_integrity', () => {
    const sealed = sealObject(key, 'ten_a', 'k', body);
    for (const i of [0, 1, 13, sealed.length - 1]) {
      const bad = Uint8Array.from(sealed);
      bad[i]! ^= 1;
      expect(
        codeOf(() => openObject(key, 'ten_a', 'k', bad)),
        `byte ${i}`,
      ).toBe('object_integrity');
    }
    expect(codeOf(() => openObject(key, 'ten_a', 'k', sealed.subarray(0, 20)))).toBe(
      'object_integrity',
    );
    expect(codeOf(() => openObject(key, 'ten_a', 'k', body))).toBe('object_integrity');
  });

  it('an empty body seals and opens', () => {
    const sealed = sealObject(key, 'ten_a', 'empty', new Uint8Array());
    expect(openObject(key, 'ten_a', 'empty', sealed).byteLength).toBe(0);
  });
});
