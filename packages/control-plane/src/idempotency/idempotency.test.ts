import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newKeyringSpec, parseKeyring } from '../crypto/keyring.js';
import { idempotencyHashKey, requestHash } from './idempotency.js';

describe('requestHash', () => {
  const key = idempotencyHashKey(parseKeyring(newKeyringSpec()));
  const body = { wait_seconds: 0, secrets: { PIN: '123456' }, metadata: { a: '1' } };

  it('is keyed: no unsalted SHA-256 of the body, another key gives another hash', () => {
    const hash = requestHash(body, key);
    const canonical = '{"metadata":{"a":"1"},"secrets":{"PIN":"123456"},"wait_seconds":0}';
    expect(hash).not.toContain(createHash('sha256').update(canonical).digest('hex'));
    expect(requestHash(body, idempotencyHashKey(parseKeyring(newKeyringSpec())))).not.toBe(hash);
    expect(requestHash(body, key)).toBe(hash);
  });

  it('leaves secret values out: the same names with other values are the same request', () => {
    expect(requestHash({ ...body, secrets: { PIN: '654321' } }, key)).toBe(requestHash(body, key));
    expect(requestHash({ ...body, secrets: { OTHER: '123456' } }, key)).not.toBe(
      requestHash(body, key),
    );
    expect(requestHash({ ...body, metadata: { a: '2' } }, key)).not.toBe(requestHash(body, key));
  });

  it('the same key derives from the same keyring (replicas agree)', () => {
    const spec = newKeyringSpec();
    expect(idempotencyHashKey(parseKeyring(spec))).toEqual(idempotencyHashKey(parseKeyring(spec)));
  });
});
