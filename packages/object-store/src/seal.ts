import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { ObjectStoreError } from './types.js';

// A sealed object: [version 1][12-byte nonce][ciphertext][16-byte GCM tag], AES-256-GCM under
// the tenant's data key. The additional data binds the tenant and the key, so a body copied to
// another key, or into another tenant's prefix, fails to open instead of being served there.
const VERSION = 1;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** Bytes a sealed object adds to its plaintext. */
export const SEAL_OVERHEAD = 1 + NONCE_BYTES + TAG_BYTES;

/** aadOf names where a sealed body belongs; NUL cannot occur in a tenant id or a key. */
const aadOf = (tenantId: string, key: string) =>
  Buffer.from(`cubicle-object-v1\0${tenantId}\0${key}`);

function checkKey(dataKey: Uint8Array) {
  if (dataKey.byteLength !== 32) throw new Error('a tenant data key is 32 bytes');
}

/** sealObject encrypts one object's body for (tenantId, key) under the tenant's data key. */
export function sealObject(
  dataKey: Uint8Array,
  tenantId: string,
  key: string,
  plaintext: Uint8Array,
): Uint8Array {
  checkKey(dataKey);
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', dataKey, nonce);
  cipher.setAAD(aadOf(tenantId, key));
  return new Uint8Array(
    Buffer.concat([
      Buffer.from([VERSION]),
      nonce,
      cipher.update(plaintext),
      cipher.final(),
      cipher.getAuthTag(),
    ]),
  );
}

/**
 * openObject decrypts what sealObject made for the same (tenantId, key); anything else (a
 * tampered body, another key's or tenant's body, another data key) throws `object_integrity`.
 */
export function openObject(
  dataKey: Uint8Array,
  tenantId: string,
  key: string,
  sealed: Uint8Array,
): Uint8Array {
  checkKey(dataKey);
  const buf = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
  if (buf.length < SEAL_OVERHEAD || buf[0] !== VERSION) {
    throw new ObjectStoreError('object_integrity', `object ${key} is not a sealed object`);
  }
  try {
    const decipher = createDecipheriv('aes-256-gcm', dataKey, buf.subarray(1, 1 + NONCE_BYTES));
    decipher.setAAD(aadOf(tenantId, key));
    decipher.setAuthTag(buf.subarray(buf.length - TAG_BYTES));
    const head = decipher.update(buf.subarray(1 + NONCE_BYTES, buf.length - TAG_BYTES));
    const tail = decipher.final(); // GCM answers everything from update: checked, empty
    // A view of the one plaintext buffer, not two more copies (a 4 MiB chunk is read often).
    const plain = tail.length === 0 ? head : Buffer.concat([head, tail]);
    return new Uint8Array(plain.buffer, plain.byteOffset, plain.byteLength);
  } catch (error) {
    throw new ObjectStoreError(
      'object_integrity',
      `object ${key} failed to open: tampered, moved from another key or tenant, or sealed under another data key`,
      { cause: error },
    );
  }
}
