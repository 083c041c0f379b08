import { describe, expect, it } from 'vitest';
import { displayPrefix, generateApiKey, hashApiKey, isWellFormedApiKey } from './api-key-secret.js';

describe('API key secrets', () => {
  it('generates well-formed, unique keys whose prefix and hash derive from the key', () => {
    const a = generateApiKey();
    const b = generateApiKey();
    expect(a.key).toMatch(/^cbk_[0-9a-hjkmnp-tv-z]{52}$/);
    expect(isWellFormedApiKey(a.key)).toBe(true);
    expect(a.key).not.toBe(b.key);
    expect(a.prefix).toBe(a.key.slice(0, 12));
    expect(a.prefix).toMatch(/^cbk_.{8}$/);
    expect(a.hash).toBe(hashApiKey(a.key));
    expect(a.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(a.hash).not.toContain(a.key.slice(4));
  });

  it('hashes with SHA-256 (known vector)', () => {
    expect(hashApiKey('abc')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });

  it('refuses strings that cannot be keys', () => {
    const { key } = generateApiKey();
    for (const bad of [
      '',
      'cbk_',
      key.slice(0, -1),
      `${key}x`,
      key.toUpperCase(),
      `xbk_${key.slice(4)}`,
      `${key.slice(0, -1)}i`,
    ]) {
      expect(isWellFormedApiKey(bad), bad).toBe(false);
    }
    expect(displayPrefix(key)).toBe(key.slice(0, 12));
  });
});
