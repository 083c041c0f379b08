import { createHash, randomBytes } from 'node:crypto';

/** Every Cubicle API key starts with this, so leaked keys are easy to recognise and scan for. */
export const API_KEY_PREFIX = 'cbk_';
/** Characters of the secret part shown as the key's display prefix (`cbk_` + 8). */
const DISPLAY_CHARS = 8;
// Crockford base32, lowercase: no i, l, o, u; one alphabet with our ids.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
/** 32 random bytes = 256 bits, encoded as 52 base32 characters (the last one carries 1 bit). */
const SECRET_CHARS = 52;
const KEY_PATTERN = new RegExp(`^${API_KEY_PREFIX}[${ALPHABET}]{${SECRET_CHARS}}$`);

function base32(bytes: Buffer): string {
  let out = '';
  let acc = 0;
  let bits = 0;
  for (const byte of bytes) {
    acc = (acc << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(acc >> (bits - 5)) & 31]!;
      bits -= 5;
    }
    acc &= (1 << bits) - 1;
  }
  if (bits > 0) out += ALPHABET[(acc << (5 - bits)) & 31]!;
  return out;
}

export interface GeneratedApiKey {
  /** The full key: shown to its owner once, never stored. */
  key: string;
  /** `cbk_` + 8 characters: stored and shown so people can tell their keys apart. */
  prefix: string;
  /** SHA-256 (hex) of the full key: what the database keeps. */
  hash: string;
}

/**
 * hashApiKey is SHA-256 without salt or stretching on purpose: keys are 256 random bits, so
 * a fast hash cannot be brute-forced, and verification stays one indexed lookup by hash.
 */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** generateApiKey makes a new random key with its display prefix and hash. */
export function generateApiKey(): GeneratedApiKey {
  const key = API_KEY_PREFIX + base32(randomBytes(32));
  return { key, prefix: displayPrefix(key), hash: hashApiKey(key) };
}

/** displayPrefix is the part of a key that is safe to store, log and show. */
export function displayPrefix(key: string): string {
  return key.slice(0, API_KEY_PREFIX.length + DISPLAY_CHARS);
}

/** isWellFormedApiKey rejects strings that cannot be keys before any lookup runs. */
export function isWellFormedApiKey(value: string): boolean {
  return KEY_PATTERN.test(value);
}
