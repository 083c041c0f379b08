import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { encodePng } from './encode-png.js';

describe('encodePng', () => {
  it('round-trips pixels through an independent decoder', () => {
    const width = 37;
    const height = 11;
    const rgb = Buffer.alloc(width * height * 3);
    for (let i = 0; i < rgb.length; i += 1) rgb[i] = (i * 7919) % 251;
    const decoded = PNG.sync.read(encodePng(rgb, width, height));
    expect([decoded.width, decoded.height]).toEqual([width, height]);
    for (let p = 0; p < width * height; p += 1)
      expect([...decoded.data.subarray(p * 4, p * 4 + 3)]).toEqual([
        ...rgb.subarray(p * 3, p * 3 + 3),
      ]);
  });

  it('rejects a buffer of the wrong size', () => {
    expect(() => encodePng(Buffer.alloc(10), 2, 2)).toThrow(/does not match/);
  });
});
