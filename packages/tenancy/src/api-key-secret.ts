import { createHash, randomBytes } from 'node:crypto';
import { BASE32_ALPHABET, encodeBase32 } from '@cubicle/db';

/** Every Cubicle API key starts with this, so leaked keys are easy to recognise and scan for. */
export const API_KEY_PREFIX = 'cbk_';
/** Characters of the secret part shown as the key's display prefix (`cbk_` + 8). */
const DISPLAY_CHARS = 8;
/** 32 random bytes = 256 bits, encoded as 52 base32 characters (the last one carries 1 bit). */
const SECRET_CHARS = 52;
const KEY_PATTERN = new RegExp(`^${API_KEY_PREFIX}[${BASE32_ALPHABET}]{${SECRET_CHARS}}$`);

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
  const key = API_KEY_PREFIX + encodeBase32(randomBytes(32));
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
