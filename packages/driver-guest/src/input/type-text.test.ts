import { describe, expect, it } from 'vitest';
import { keysymOf } from './type-text.js';

describe('keysymOf', () => {
  it('maps Latin-1 directly, control characters to keys and the rest to Unicode keysyms', () => {
    expect(keysymOf('a')).toBe(0x61);
    expect(keysymOf('ß')).toBe(0xdf);
    expect(keysymOf('\n')).toBe(0xff0d);
    expect(keysymOf('\t')).toBe(0xff09);
    expect(keysymOf('✓')).toBe(0x01002713);
    expect(keysymOf('😀')).toBe(0x0101f600);
  });
});
