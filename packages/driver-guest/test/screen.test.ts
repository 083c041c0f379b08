import { ScreenshotImage } from '@cubicle/contract/guest';
import jpeg from 'jpeg-js';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestDesktop, type GuestDesktop } from './helpers/guest-desktop.js';

let g: GuestDesktop;
let windowId: number;
beforeAll(async () => {
  g = await startGuestDesktop();
  windowId = (await g.launchFixture('screen-fixture')).window.window_id;
});
afterAll(async () => g?.stop());

/** distinctColours counts colours in an RGBA image: a real window has many, a blank one 1. */
function distinctColours(data: Buffer): number {
  const seen = new Set<number>();
  for (let i = 0; i < data.length; i += 4)
    seen.add((data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!);
  return seen.size;
}

describe('screenshot', () => {
  it('captures the whole display at full size as a PNG with the window in it', async () => {
    const res = await g.call('POST', '/v1/screenshot', {});
    expect(res.status).toBe(200);
    const shot = ScreenshotImage.parse(res.json);
    expect(shot).toMatchObject({
      window_id: null,
      format: 'png',
      width: 1280,
      height: 800,
      scale: 1,
    });
    expect(shot.origin).toEqual({ x: 0, y: 0 });
    const png = PNG.sync.read(Buffer.from(shot.data, 'base64'));
    expect([png.width, png.height]).toEqual([1280, 800]);
    expect(distinctColours(png.data)).toBeGreaterThan(10);
  });

  it('downscales to max_dimension', async () => {
    const shot = ScreenshotImage.parse(
      (await g.call('POST', '/v1/screenshot', { max_dimension: 640 })).json,
    );
    expect([shot.width, shot.height, shot.scale]).toEqual([640, 400, 0.5]);
    const png = PNG.sync.read(Buffer.from(shot.data, 'base64'));
    expect([png.width, png.height]).toEqual([640, 400]);
  });

  it('captures one window at its client area and origin, also as JPEG', async () => {
    const list = (await g.call('GET', '/v1/windows')).json.windows;
    const win = list.find((w: { window_id: number }) => w.window_id === windowId);
    const shot = ScreenshotImage.parse(
      (await g.call('POST', '/v1/screenshot', { window_id: windowId })).json,
    );
    expect(shot.window_id).toBe(windowId);
    // The client area lies inside the window manager's frame.
    expect(shot.origin.x).toBeGreaterThanOrEqual(win.geometry.x);
    expect(shot.origin.y).toBeGreaterThan(win.geometry.y);
    expect(shot.width).toBeLessThan(win.geometry.w + 1);
    expect(shot.width).toBeGreaterThanOrEqual(400);
    const png = PNG.sync.read(Buffer.from(shot.data, 'base64'));
    expect(distinctColours(png.data)).toBeGreaterThan(10);

    const jpg = ScreenshotImage.parse(
      (await g.call('POST', '/v1/screenshot', { window_id: windowId, format: 'jpeg', quality: 70 }))
        .json,
    );
    const decoded = jpeg.decode(Buffer.from(jpg.data, 'base64'));
    expect([decoded.width, decoded.height]).toEqual([shot.width, shot.height]);
    expect(jpg.screenshot_id).not.toBe(shot.screenshot_id);
  });

  it('answers 404 window_not_found for an unknown window and 400 for a bad size', async () => {
    const missing = await g.call('POST', '/v1/screenshot', { window_id: 0x7ffffff });
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe('window_not_found');
    const bad = await g.call('POST', '/v1/screenshot', { max_dimension: 10 });
    expect(bad.status).toBe(400);
  });

  it('requires the bearer token', async () => {
    const res = await g.app.inject({ method: 'POST', url: '/v1/screenshot', payload: {} });
    expect(res.statusCode).toBe(401);
  });
});
