import { describe, expect, it } from 'vitest';
import { diffRegion } from './watch-window.js';

const img = (w: number, h: number) => ({ width: w, height: h, data: Buffer.alloc(w * h * 3) });

describe('diffRegion', () => {
  it('reports share and screen bounding box of changed pixels', () => {
    const a = img(10, 10);
    const b = img(10, 10);
    for (let y = 2; y < 4; y += 1) for (let x = 1; x < 6; x += 1) b.data[(y * 10 + x) * 3] = 9;
    expect(diffRegion(a, b, { x: 100, y: 200 })).toEqual({
      ratio: 0.1,
      region: { x: 101, y: 202, w: 5, h: 2 },
    });
  });

  it('ignores identical images and a caret-thin change', () => {
    const a = img(10, 10);
    const b = img(10, 10);
    expect(diffRegion(a, b, { x: 0, y: 0 })).toBeNull();
    for (let y = 0; y < 10; y += 1) b.data[(y * 10 + 4) * 3 + 1] = 200;
    expect(diffRegion(a, b, { x: 0, y: 0 })).toBeNull();
  });
});
