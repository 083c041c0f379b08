import { describe, expect, it } from 'vitest';
import { newKeyringSpec, open, parseKeyring, seal } from './keyring.js';

describe('keyring', () => {
  it('round-trips, binds the aad, and detects tampering', () => {
    const ring = parseKeyring(newKeyringSpec());
    const sealed = seal(ring, 'guest-token-xyz', 'sbx_1');
    expect(Buffer.from(sealed).includes(Buffer.from('guest-token-xyz'))).toBe(false);
    expect(open(ring, sealed, 'sbx_1')).toBe('guest-token-xyz');
    expect(() => open(ring, sealed, 'sbx_2')).toThrow();
    const tampered = Buffer.from(sealed);
    tampered[tampered.length - 20]! ^= 1;
    expect(() => open(ring, tampered, 'sbx_1')).toThrow();
  });

  it('reads values sealed under an older key after rotation', () => {
    const old = newKeyringSpec('old');
    const sealed = seal(parseKeyring(old), 'v');
    const rotated = parseKeyring(`${newKeyringSpec('new')},${old}`);
    expect(rotated.currentKeyId).toBe('new');
    expect(open(rotated, sealed)).toBe('v');
  });

  it('rejects malformed keyrings', () => {
    expect(() => parseKeyring('')).toThrow();
    expect(() => parseKeyring('k1:short')).toThrow(/32 bytes/);
  });
});
