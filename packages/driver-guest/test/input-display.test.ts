import { ActionResult, ScreenshotImage } from '@cubicle/contract/guest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestDesktop, type GuestDesktop } from './helpers/guest-desktop.js';

// Pixel input measured on the whole display (no window_id), as computer-use agents see the
// screen, and what their tools need besides: the pointer's position, a region capture (zoom),
// a button held across requests, a triple click, a held key.
let g: GuestDesktop;
beforeAll(async () => {
  g = await startGuestDesktop();
});
afterAll(async () => g?.stop());

async function shot(body: Record<string, unknown> = {}) {
  const res = await g.call('POST', '/v1/screenshot', body);
  expect(res.status).toBe(200);
  return ScreenshotImage.parse(res.json);
}

/** originOf is where a window's client area (its screenshot's pixel 0,0) is on the screen. */
async function originOf(windowId: number) {
  return (await shot({ window_id: windowId })).origin;
}

async function pixel(body: Record<string, unknown>) {
  const res = await g.call('POST', '/v1/act/pixel', body);
  expect(res.status).toBe(200);
  return ActionResult.parse(res.json);
}

describe('pixel input on the whole display', () => {
  it('clicks through a downscaled display screenshot and refuses an older one', async () => {
    const f = await g.launchFixture('display-click');
    const { x: wx, y: wy } = await originOf(f.window.window_id);
    const old = await shot({ max_dimension: 640 });
    const display = await shot({ max_dimension: 640 });
    expect(display.window_id).toBeNull();
    expect(display.scale).toBeLessThan(1);
    const button = f.widgets.button!;
    const at = {
      x: Math.round((wx + button.x + button.w / 2) * display.scale),
      y: Math.round((wy + button.y + button.h / 2) * display.scale),
    };
    const stale = await pixel({ action: 'click', screenshot_id: old.screenshot_id, ...at });
    expect(stale).toMatchObject({ effect: 'refused', error: { code: 'stale_screenshot' } });
    expect(f.readLog()).toEqual(['ready']);
    const click = await pixel({ action: 'click', screenshot_id: display.screenshot_id, ...at });
    expect(click).toMatchObject({ effect: 'confirmed', route: 'xtest' });
    expect(await f.logOf(2)).toEqual(['ready', 'click 1']);
    // A screenshot reports where the pointer is, in its own pixels.
    const after = await shot({ max_dimension: 640 });
    expect(after.cursor).toEqual(at);
  });

  it('moves the pointer where asked and the next screenshot says where it is', async () => {
    const display = await shot();
    const moved = await pixel({
      action: 'move',
      screenshot_id: display.screenshot_id,
      x: 17,
      y: 23,
    });
    expect(moved.effect).not.toBe('refused');
    expect((await shot()).cursor).toEqual({ x: 17, y: 23 });
  });

  it('holds a button across requests: mouse_down, then mouse_up elsewhere drags a slider', async () => {
    const f = await g.launchFixture('display-hold');
    const { x: wx, y: wy } = await originOf(f.window.window_id);
    const display = await shot();
    const scale = f.widgets.scale!;
    const y = wy + scale.y + Math.floor(scale.h / 2);
    const down = await pixel({
      action: 'mouse_down',
      screenshot_id: display.screenshot_id,
      x: wx + scale.x + 6,
      y,
    });
    expect(down.effect).not.toBe('refused');
    const up = await pixel({
      action: 'mouse_up',
      screenshot_id: display.screenshot_id,
      x: wx + scale.x + Math.floor(scale.w * 0.75),
      y,
    });
    expect(up.effect).toBe('confirmed');
    const values = f.readLog().filter((l) => l.startsWith('scale '));
    expect(Number(values.at(-1)!.split(' ')[1])).toBeGreaterThan(50);
  });

  it('triple-clicks with count 3 and holds a key for hold_ms', async () => {
    const f = await g.launchFixture('display-keys');
    const origin = await originOf(f.window.window_id);
    const display = await shot();
    const entry = f.widgets.entry!;
    const at = { x: origin.x + entry.x + 20, y: origin.y + entry.y + Math.floor(entry.h / 2) };
    await pixel({
      action: 'type',
      screenshot_id: display.screenshot_id,
      text: 'one two',
      focus_at: at,
    });
    await f.logOf(8);
    // Past GTK's double-click time, so the focus click of `type` is not counted as a 4th click.
    await new Promise((r) => setTimeout(r, 500));
    // A triple click selects the whole line, so the typed letter replaces all of it.
    const triple = await pixel({
      action: 'click',
      screenshot_id: display.screenshot_id,
      count: 3,
      ...at,
    });
    expect(triple).toMatchObject({ delivery: { requested_count: 3, delivered_count: 3 } });
    await pixel({ action: 'key', screenshot_id: display.screenshot_id, keys: 'z' });
    await expect.poll(() => f.readLog().at(-1)).toBe('text z');
    const started = performance.now();
    const held = await pixel({
      action: 'key',
      screenshot_id: display.screenshot_id,
      keys: 'BackSpace',
      hold_ms: 400,
    });
    expect(performance.now() - started).toBeGreaterThanOrEqual(400);
    expect(held.effect).toBe('confirmed');
    await expect.poll(() => f.readLog().at(-1)).toBe('text ');
  });
});

describe('a region of a capture (zoom)', () => {
  it('captures only the region, at full size, without becoming the latest screenshot', async () => {
    const f = await g.launchFixture('region');
    const window = await shot({ window_id: f.window.window_id });
    const button = f.widgets.button!;
    const region = await shot({
      window_id: f.window.window_id,
      region: { x: button.x, y: button.y, w: 120, h: 40 },
    });
    expect(region).toMatchObject({ width: 120, height: 40, scale: 1 });
    expect(region.origin).toEqual({
      x: window.origin.x + button.x,
      y: window.origin.y + button.y,
    });
    // The window's full screenshot is still its latest: input quoting it is accepted.
    const click = await pixel({
      action: 'click',
      window_id: f.window.window_id,
      screenshot_id: window.screenshot_id,
      x: button.x + 10,
      y: button.y + 10,
    });
    expect(click.effect).toBe('confirmed');
    // A region of the display is clipped to the screen; one wholly outside it is a conflict.
    const display = await shot();
    const corner = await shot({ region: { x: display.width - 30, y: 0, w: 100, h: 20 } });
    expect(corner).toMatchObject({
      width: 30,
      height: 20,
      origin: { x: display.width - 30, y: 0 },
    });
    const outside = await g.call('POST', '/v1/screenshot', {
      region: { x: display.width + 5, y: 0, w: 10, h: 10 },
    });
    expect(outside.status).toBe(409);
  });
});
