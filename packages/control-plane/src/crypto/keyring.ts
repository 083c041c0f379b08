import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { freshRandom } from './random-pool.js';

/**
 * Keyring holds the AES-256-GCM keys that seal secrets at rest (guest tokens, claim secrets).
 * Every sealed value names its key id, so keys rotate by adding a new current key and keeping
 * the old ones for reading.
 */
export interface Keyring {
  currentKeyId: string;
  keys: Map<string, Buffer>;
}

/** parseKeyring reads `id1:base64key1,id2:base64key2`; the first is current. */
export function parseKeyring(spec: string): Keyring {
  const keys = new Map<string, Buffer>();
  let currentKeyId: string | undefined;
  for (const part of spec
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [id, b64] = part.split(':');
    if (!id || !b64 || !/^[a-z0-9-]{1,32}$/i.test(id))
      throw new Error('keyring entries must be <id>:<base64 key>');
    const key = Buffer.from(b64, 'base64');
    if (key.length !== 32) throw new Error(`key ${id} must be 32 bytes (base64)`);
    keys.set(id, key);
    currentKeyId ??= id;
  }
  if (!currentKeyId) throw new Error('keyring is empty');
  return { currentKeyId, keys };
}

/** newKeyringSpec makes a fresh single-key keyring string (used on first start of the embedded default). */
export function newKeyringSpec(id = 'k1'): string {
  return `${id}:${randomBytes(32).toString('base64')}`;
}

/** seal encrypts: [1 byte id length][id][12 byte nonce][ciphertext][16 byte tag]. */
export function seal(keyring: Keyring, plaintext: string, aad = ''): Uint8Array<ArrayBuffer> {
  return sealBytes(keyring, Buffer.from(plaintext, 'utf8'), aad);
}

/** open decrypts what seal produced; a wrong key, aad or a tampered value throws. */
export function open(keyring: Keyring, sealed: Uint8Array, aad = ''): string {
  return openBytes(keyring, sealed, aad).toString('utf8');
}

/** sealBytes is seal for bytes (data keys); the newest key of the keyring encrypts. */
export function sealBytes(keyring: Keyring, plaintext: Buffer, aad = ''): Uint8Array<ArrayBuffer> {
  const key = keyring.keys.get(keyring.currentKeyId)!;
  const nonce = freshRandom(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(aad));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  const id = Buffer.from(keyring.currentKeyId);
  // A fresh Uint8Array (not a pooled Buffer view) is what Prisma's Bytes columns take.
  return new Uint8Array(
    Buffer.concat([Buffer.from([id.length]), id, nonce, body, cipher.getAuthTag()]),
  );
}

/** sealedKeyId names the master key a sealed value needs (any key listed in the keyring opens it). */
export function sealedKeyId(sealed: Uint8Array): string {
  const buf = Buffer.from(sealed);
  return buf.subarray(1, 1 + buf[0]!).toString();
}

/** openBytes decrypts what sealBytes produced with whichever listed key sealed it. */
export function openBytes(keyring: Keyring, sealed: Uint8Array, aad = ''): Buffer {
  const buf = Buffer.from(sealed);
  const idLen = buf[0]!;
  const id = buf.subarray(1, 1 + idLen).toString();
  const key = keyring.keys.get(id);
  if (!key) throw new Error(`no key ${id} in the keyring`);
  const nonce = buf.subarray(1 + idLen, 13 + idLen);
  const tag = buf.subarray(buf.length - 16);
  const decipher = createDecipheriv('aes-256-gcm', key, nonce);
  decipher.setAAD(Buffer.from(aad));
  decipher.setAuthTag(tag);
  return Buffer.concat([
    decipher.update(buf.subarray(13 + idLen, buf.length - 16)),
    decipher.final(),
  ]);
}
