import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let used = POOL_BYTES;

/**
 * freshRandom returns `n` (≤ 4096) bytes from the CSPRNG in a buffer of their own. They come from
 * a pool filled by one `randomFillSync` call per 4 KiB: sealing one secret takes three random
 * values (data key, its nonce, the wrap's nonce), and on the claim hot path each `randomBytes`
 * call cost 4-30 µs of mostly JavaScript argument handling and allocation (bench:claim's API
 * profile: ~0.13 ms of a claim with two secrets), while the bytes themselves are cheap. Every
 * byte is handed out once and zeroed in the pool as it leaves, so no key material lingers there.
 * (Ids draw from a pool of their own in @cubicle/db: they are not secret, and take views, not
 * copies; key material stays apart from bytes that are published.)
 */
export function freshRandom(n: number): Buffer {
  if (!Number.isInteger(n) || n < 0 || n > POOL_BYTES)
    throw new RangeError(`freshRandom takes 0 to ${POOL_BYTES} bytes, not ${n}`);
  if (used + n > POOL_BYTES) {
    randomFillSync(pool);
    used = 0;
  }
  const out = Buffer.allocUnsafeSlow(n);
  pool.copy(out, 0, used, used + n);
  pool.fill(0, used, used + n);
  used += n;
  return out;
}
