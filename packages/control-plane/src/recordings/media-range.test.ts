import { describe, expect, it } from 'vitest';
import { parseRange, slicesFor } from './media-range.js';

describe('parseRange', () => {
  it('reads the three forms of one byte range, clamped to the length', () => {
    expect(parseRange(undefined, 100)).toBeNull();
    expect(parseRange('bytes=0-9', 100)).toEqual({ start: 0, end: 9 });
    expect(parseRange('bytes=90-', 100)).toEqual({ start: 90, end: 99 });
    expect(parseRange('bytes=90-500', 100)).toEqual({ start: 90, end: 99 });
    expect(parseRange('bytes=-10', 100)).toEqual({ start: 90, end: 99 });
    expect(parseRange('bytes=-500', 100)).toEqual({ start: 0, end: 99 });
  });

  it('is unsatisfiable past the end, backwards, empty, or malformed', () => {
    expect(parseRange('bytes=100-', 100)).toBe('unsatisfiable');
    expect(parseRange('bytes=9-3', 100)).toBe('unsatisfiable');
    expect(parseRange('bytes=-0', 100)).toBe('unsatisfiable');
    expect(parseRange('bytes=-', 100)).toBe('unsatisfiable');
    expect(parseRange('items=0-1', 100)).toBe('unsatisfiable');
  });
});

describe('slicesFor', () => {
  const parts = [
    { key: 'init', bytes: 10 },
    { key: 'a', bytes: 100 },
    { key: 'b', bytes: 50 },
  ];
  it('maps a range across part boundaries to the parts it covers', () => {
    expect(slicesFor(parts, 5, 114)).toEqual([
      { key: 'init', from: 5, to: 10 },
      { key: 'a', from: 0, to: 100 },
      { key: 'b', from: 0, to: 5 },
    ]);
  });
  it('takes one part alone, and the whole stream whole', () => {
    expect(slicesFor(parts, 20, 29)).toEqual([{ key: 'a', from: 10, to: 20 }]);
    const all = slicesFor(parts, 0, 159);
    expect(all.reduce((n, s) => n + s.to - s.from, 0)).toBe(160);
  });
});
