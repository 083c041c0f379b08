import { describe, expect, it } from 'vitest';
import { ScreenshotRegistry, toScreen } from './screenshot-registry.js';

const mapping = (id: string, windowId = 7) => ({
  screenshot_id: id,
  window_id: windowId,
  origin: { x: 100, y: 50 },
  scale: 0.5,
  width: 200,
  height: 100,
});

describe('ScreenshotRegistry', () => {
  it('accepts only the latest screenshot of a window', () => {
    const reg = new ScreenshotRegistry();
    const a = reg.nextId();
    const b = reg.nextId();
    expect(a).not.toBe(b);
    expect(a).toMatch(/^p[0-9a-z]+$/);
    reg.remember(mapping(a));
    expect(reg.check(7, a).ok).toBe(true);
    reg.remember(mapping(b));
    expect(reg.check(7, a)).toEqual({ ok: false, latest: b });
    expect(reg.check(8, b)).toEqual({ ok: false, latest: null });
    reg.forget(7);
    expect(reg.check(7, b).ok).toBe(false);
  });

  it('never reissues an id of another driver process', () => {
    expect(new ScreenshotRegistry().nextId()).not.toBe(new ScreenshotRegistry().nextId());
  });
});

describe('toScreen', () => {
  it('maps through scale and origin, refusing pixels outside the image', () => {
    expect(toScreen(mapping('p1'), { x: 0, y: 0 })).toEqual({ x: 101, y: 51 });
    expect(toScreen(mapping('p1'), { x: 10, y: 20 })).toEqual({ x: 121, y: 91 });
    expect(toScreen(mapping('p1'), { x: 200, y: 0 })).toBeNull();
  });
});
