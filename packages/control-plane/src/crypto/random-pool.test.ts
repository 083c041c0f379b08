import { describe, expect, it } from 'vitest';
import { freshRandom } from './random-pool.js';

describe('freshRandom', () => {
  it('hands out bytes once: 2,000 keys across many pool refills are all distinct', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2_000; i++) {
      const key = freshRandom(i % 3 === 0 ? 12 : 32);
      expect(key.length).toBe(i % 3 === 0 ? 12 : 32);
      seen.add(key.toString('hex'));
    }
    expect(seen.size).toBe(2_000);
  });

  it('returns buffers of their own: changing one leaves the next untouched', () => {
    const a = freshRandom(32);
    const copy = Buffer.from(a);
    a.fill(0);
    const b = freshRandom(32);
    expect(b.equals(Buffer.alloc(32))).toBe(false);
    expect(b.equals(copy)).toBe(false);
    expect(a.buffer).not.toBe(b.buffer);
  });

  it('refuses sizes the pool cannot serve', () => {
    expect(() => freshRandom(4097)).toThrow(RangeError);
    expect(() => freshRandom(-1)).toThrow(RangeError);
    expect(() => freshRandom(1.5)).toThrow(RangeError);
  });
});
