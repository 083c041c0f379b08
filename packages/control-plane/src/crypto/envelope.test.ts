import { describe, expect, it } from 'vitest';
import { openEnvelope, rewrapEnvelope, sealEnvelope } from './envelope.js';
import { newKeyringSpec, parseKeyring, sealedKeyId } from './keyring.js';

describe('envelope encryption', () => {
  it('seals each value with its own data key, bound to its aad', () => {
    const ring = parseKeyring(newKeyringSpec('a'));
    const one = sealEnvelope(ring, 'hunter2-value', 'secret:t:N');
    const two = sealEnvelope(ring, 'hunter2-value', 'secret:t:N');
    expect(Buffer.from(one.ciphertext).equals(Buffer.from(two.ciphertext))).toBe(false);
    expect(Buffer.from(one.ciphertext).includes(Buffer.from('hunter2'))).toBe(false);
    expect(one.keyId).toBe('a');
    expect(openEnvelope(ring, one, 'secret:t:N')).toBe('hunter2-value');
    expect(() => openEnvelope(ring, one, 'secret:t:OTHER')).toThrow();
    const tampered = { ...one, ciphertext: new Uint8Array(one.ciphertext) };
    tampered.ciphertext[0]! ^= 1;
    expect(() => openEnvelope(ring, tampered, 'secret:t:N')).toThrow();
  });

  it('rotates: old key decrypts after a new one is added; rewrap moves data keys; old key can go', () => {
    const specA = newKeyringSpec('a');
    const specB = newKeyringSpec('b');
    const env = sealEnvelope(parseKeyring(specA), 'v@lue', 'aad');
    const both = parseKeyring(`${specB},${specA}`);
    expect(openEnvelope(both, env, 'aad')).toBe('v@lue');
    const moved = rewrapEnvelope(both, env.wrappedKey, 'aad');
    expect(moved?.keyId).toBe('b');
    expect(sealedKeyId(moved!.wrappedKey)).toBe('b');
    expect(rewrapEnvelope(both, moved!.wrappedKey, 'aad')).toBeNull();
    const onlyB = parseKeyring(specB);
    expect(openEnvelope(onlyB, { ...env, wrappedKey: moved!.wrappedKey }, 'aad')).toBe('v@lue');
    expect(() => openEnvelope(onlyB, env, 'aad')).toThrow(/no key a/);
  });
});
