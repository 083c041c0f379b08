import { randomFillSync } from 'node:crypto';
import { IdPrefixes, type IdKind } from '@cubicle/contract/api';

// Crockford base32, lowercase: no i, l, o, u, so ids survive being read aloud or retyped.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * encodeBase32 writes bytes in lowercase Crockford base32 (5 bits a character; a last partial
 * group is padded with zero bits). Ids and API keys share this alphabet.
 */
export function encodeBase32(bytes: Uint8Array): string {
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

export const BASE32_ALPHABET = ALPHABET;

// Random bytes are drawn from the CSPRNG 1 KiB at a time and handed out 10 at a time: one
// randomBytes call per id costs more than the rest of the id (a claim makes three ids).
const POOL_BYTES = 1_000;
const pool = Buffer.alloc(POOL_BYTES);
let poolOffset = POOL_BYTES;

function randomTen(): Uint8Array {
  if (poolOffset + 10 > POOL_BYTES) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  poolOffset += 10;
  // A view, read at once by encodeBase32; each byte is handed out once before the next refill.
  return pool.subarray(poolOffset - 10, poolOffset);
}

/**
 * ulid returns 26 characters: 10 for the millisecond time (so ids sort by creation and index
 * well) and 16 from 80 random bits.
 */
export function ulid(now: number = Date.now()): string {
  let time = '';
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32]! + time;
    t = Math.floor(t / 32);
  }
  // 80 random bits are exactly 16 characters: no padding.
  return time + encodeBase32(randomTen());
}

/** newId makes a public id of the given kind, e.g. `clm_01j…`. */
export function newId(kind: IdKind): string {
  return `${IdPrefixes[kind]}_${ulid()}`;
}
