import { createCipheriv, createDecipheriv } from 'node:crypto';
import { openBytes, sealBytes, sealedKeyId, type Keyring } from './keyring.js';
import { freshRandom } from './random-pool.js';

/**
 * Envelope is how a secret value rests in the database: the value sealed with its own random
 * data key (AES-256-GCM), and that data key sealed by a master key of the keyring. Rotating the
 * master key re-wraps `wrappedKey` only (rewrapEnvelope); `ciphertext` never changes.
 */
export interface Envelope {
  /** The value's ciphertext followed by its 16-byte GCM tag. */
  ciphertext: Uint8Array<ArrayBuffer>;
  nonce: Uint8Array<ArrayBuffer>;
  /** The data key as sealBytes produced it (names its master key). */
  wrappedKey: Uint8Array<ArrayBuffer>;
  /** The master key that wrapped the data key (also inside wrappedKey; a column for rewrap queries). */
  keyId: string;
}

const TAG_BYTES = 16;

/**
 * sealEnvelope encrypts one value. `aad` binds the envelope to where it belongs (tenant and
 * name): a ciphertext copied onto another tenant's or name's row fails to open.
 */
export function sealEnvelope(keyring: Keyring, value: string, aad: string): Envelope {
  const dataKey = freshRandom(32);
  const nonce = freshRandom(12);
  const cipher = createCipheriv('aes-256-gcm', dataKey, nonce);
  cipher.setAAD(Buffer.from(aad));
  const body = Buffer.concat([cipher.update(value, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  const wrappedKey = sealBytes(keyring, dataKey, aad);
  dataKey.fill(0);
  return {
    ciphertext: new Uint8Array(body),
    nonce: new Uint8Array(nonce),
    wrappedKey,
    keyId: keyring.currentKeyId,
  };
}

/** openEnvelope decrypts what sealEnvelope made with any key of the keyring; tampering throws. */
export function openEnvelope(
  keyring: Keyring,
  envelope: { ciphertext: Uint8Array; nonce: Uint8Array; wrappedKey: Uint8Array },
  aad: string,
): string {
  const dataKey = openBytes(keyring, envelope.wrappedKey, aad);
  try {
    const body = Buffer.from(envelope.ciphertext);
    const decipher = createDecipheriv('aes-256-gcm', dataKey, Buffer.from(envelope.nonce));
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    return Buffer.concat([
      decipher.update(body.subarray(0, body.length - TAG_BYTES)),
      decipher.final(),
    ]).toString('utf8');
  } finally {
    dataKey.fill(0);
  }
}

/**
 * rewrapEnvelope seals an envelope's data key again with the keyring's current key; null when
 * it is already on that key. The value itself is not decrypted.
 */
export function rewrapEnvelope(
  keyring: Keyring,
  wrappedKey: Uint8Array,
  aad: string,
): Pick<Envelope, 'wrappedKey' | 'keyId'> | null {
  if (sealedKeyId(wrappedKey) === keyring.currentKeyId) return null;
  const dataKey = openBytes(keyring, wrappedKey, aad);
  try {
    return { wrappedKey: sealBytes(keyring, dataKey, aad), keyId: keyring.currentKeyId };
  } finally {
    dataKey.fill(0);
  }
}

/** secretAad is the associated data of a secret's envelope: its tenant and name. */
export const secretAad = (tenantId: string, name: string): string => `secret:${tenantId}:${name}`;
