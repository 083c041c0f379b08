import { describe, expect, it } from 'vitest';
import { downscale, fitScale } from './scale-image.js';

describe('fitScale', () => {
  it('never upscales and fits the long edge', () => {
    expect(fitScale(1280, 800, 1568)).toBe(1);
    expect(fitScale(1280, 800, 640)).toBe(0.5);
    expect(fitScale(800, 1600, 400)).toBe(0.25);
  });
});

describe('downscale', () => {
  it('averages each block of source pixels', () => {
    // 4x2 image: left half black, right half white -> 2x1 of black and white.
    const data = Buffer.alloc(4 * 2 * 3);
    for (const p of [2, 3, 6, 7]) data.fill(255, p * 3, p * 3 + 3);
    const out = downscale({ width: 4, height: 2, data }, 0.5);
    expect([out.width, out.height]).toEqual([2, 1]);
    expect([...out.data]).toEqual([0, 0, 0, 255, 255, 255]);
  });

  it('keeps a one-pixel line visible as grey', () => {
    const data = Buffer.alloc(4 * 4 * 3);
    for (let y = 0; y < 4; y += 1) data.fill(255, (y * 4 + 1) * 3, (y * 4 + 2) * 3);
    const out = downscale({ width: 4, height: 4, data }, 0.5);
    expect(out.data[0]).toBe(128);
    expect(out.data[3]).toBe(0);
  });

  it('returns the image itself at scale 1', () => {
    const img = { width: 1, height: 1, data: Buffer.from([1, 2, 3]) };
    expect(downscale(img, 1)).toBe(img);
  });
});
