import { execFileSync } from 'node:child_process';
import { ActionResult, ScreenshotImage, WindowListResponse } from '@cubicle/contract/guest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestDesktop, type GuestDesktop } from './helpers/guest-desktop.js';

let g: GuestDesktop;
beforeAll(async () => {
  g = await startGuestDesktop();
});
afterAll(async () => g?.stop());

async function screenshot(windowId: number, maxDimension?: number) {
  const res = await g.call('POST', '/v1/screenshot', {
    window_id: windowId,
    ...(maxDimension ? { max_dimension: maxDimension } : {}),
  });
  return ScreenshotImage.parse(res.json);
}

async function pixel(body: Record<string, unknown>) {
  const res = await g.call('POST', '/v1/act/pixel', body);
  return {
    status: res.status,
    result: res.status === 200 ? ActionResult.parse(res.json) : null,
    json: res.json,
  };
}

async function titleOf(windowId: number): Promise<string> {
  const { windows } = WindowListResponse.parse((await g.call('GET', '/v1/windows')).json);
  return windows.find((w) => w.window_id === windowId)!.title;
}

// The fixture's button fills the top of the window: (200, 60) in window pixels is on it.
const BUTTON = { x: 200, y: 60 };
// The entry sits below the button (10 border + 100 button + 8 spacing + ~17).
const ENTRY = { x: 200, y: 135 };

describe('pixel input', () => {
  it('refuses a stale screenshot and delivers nothing', async () => {
    const f = await g.launchFixture('stale');
    const old = await screenshot(f.window.window_id);
    await screenshot(f.window.window_id);
    const { result } = await pixel({
      action: 'click',
      window_id: f.window.window_id,
      screenshot_id: old.screenshot_id,
      delivery_mode: 'foreground',
      ...BUTTON,
    });
    expect(result).toMatchObject({
      effect: 'refused',
      retry_safe: true,
      error: { code: 'stale_screenshot' },
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(f.readLog()).toEqual(['ready']);
    expect(await titleOf(f.window.window_id)).toBe('stale');
  });

  it('refuses background delivery, points outside the image and unknown windows', async () => {
    const f = await g.launchFixture('refusals');
    const shot = await screenshot(f.window.window_id);
    // Pixel input defaults to foreground; background must be asked for, and is refused.
    const background = await pixel({
      action: 'click',
      window_id: f.window.window_id,
      screenshot_id: shot.screenshot_id,
      delivery_mode: 'background',
      ...BUTTON,
    });
    expect(background.result).toMatchObject({
      effect: 'refused',
      error: { code: 'foreground_required' },
      escalation: { target: 'foreground' },
    });
    const outside = await pixel({
      action: 'click',
      window_id: f.window.window_id,
      screenshot_id: shot.screenshot_id,
      delivery_mode: 'foreground',
      x: shot.width,
      y: 5,
    });
    expect(outside.result).toMatchObject({
      effect: 'refused',
      error: { code: 'point_out_of_bounds' },
    });
    const unknown = await pixel({
      action: 'click',
      window_id: 0x7ffffff,
      screenshot_id: shot.screenshot_id,
      x: 1,
      y: 1,
    });
    expect(unknown.status).toBe(404);
    expect(unknown.json.error.code).toBe('window_not_found');
    expect(f.readLog()).toEqual(['ready']);
  });

  it('clicks a button through a downscaled screenshot and confirms it by the change', async () => {
    const f = await g.launchFixture('clicker');
    const shot = await screenshot(f.window.window_id, 200);
    expect(shot.scale).toBeLessThan(1);
    const { result } = await pixel({
      action: 'click',
      window_id: f.window.window_id,
      screenshot_id: shot.screenshot_id,
      delivery_mode: 'foreground',
      x: Math.round(BUTTON.x * shot.scale),
      y: Math.round(BUTTON.y * shot.scale),
    });
    expect(result).toMatchObject({
      effect: 'confirmed',
      route: 'xtest',
      retry_safe: false,
      screenshot_id: shot.screenshot_id,
      delivery: { mode: 'foreground', pointer_moved: true, delivered_count: 1 },
    });
    expect(result!.effect === 'confirmed' && result!.evidence.length).toBeGreaterThan(0);
    expect(await f.logOf(2)).toEqual(['ready', 'click 1']);
    expect(await titleOf(f.window.window_id)).toBe('clicker clicked:1');
  });

  it('refuses a screenshot taken before the window moved', async () => {
    const f = await g.launchFixture('moved');
    const shot = await screenshot(f.window.window_id);
    execFileSync('xdotool', ['windowmove', String(f.window.window_id), '37', '41'], {
      env: g.desktop.env,
    });
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline) {
      const { windows } = WindowListResponse.parse((await g.call('GET', '/v1/windows')).json);
      const w = windows.find((row) => row.window_id === f.window.window_id)!;
      if (w.geometry.x !== f.window.geometry.x || w.geometry.y !== f.window.geometry.y) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    const { result } = await pixel({
      action: 'click',
      window_id: f.window.window_id,
      screenshot_id: shot.screenshot_id,
      delivery_mode: 'foreground',
      ...BUTTON,
    });
    expect(result).toMatchObject({ effect: 'refused', error: { code: 'stale_screenshot' } });
    expect(f.readLog()).toEqual(['ready']);
    // A new screenshot maps to the new place, and a double click lands twice.
    const fresh = await screenshot(f.window.window_id);
    const double = await pixel({
      action: 'double_click',
      window_id: f.window.window_id,
      screenshot_id: fresh.screenshot_id,
      delivery_mode: 'foreground',
      ...BUTTON,
    });
    expect(double.result).toMatchObject({
      effect: 'confirmed',
      delivery: { requested_count: 2, delivered_count: 2 },
    });
    expect(await f.logOf(3)).toEqual(['ready', 'click 1', 'click 2']);
  });

  it('drags a slider and scrolls a list, each confirmed by what changed', async () => {
    const f = await g.launchFixture('gestures');
    const shot = await screenshot(f.window.window_id);
    const { scale, list } = f.widgets;
    const mid = scale!.y + Math.floor(scale!.h / 2);
    const drag = await pixel({
      action: 'drag',
      window_id: f.window.window_id,
      screenshot_id: shot.screenshot_id,
      delivery_mode: 'foreground',
      x: scale!.x + 6,
      y: mid,
      to_x: scale!.x + Math.floor(scale!.w / 2),
      to_y: mid,
    });
    expect(drag.result).toMatchObject({ effect: 'confirmed' });
    const scaleValues = f.readLog().filter((l) => l.startsWith('scale '));
    expect(Number(scaleValues.at(-1)!.split(' ')[1])).toBeGreaterThan(30);

    const scroll = await pixel({
      action: 'scroll',
      window_id: f.window.window_id,
      screenshot_id: shot.screenshot_id,
      delivery_mode: 'foreground',
      x: list!.x + 50,
      y: list!.y + 50,
      dy: 3,
    });
    expect(scroll.result).toMatchObject({ effect: 'confirmed' });
    expect(f.readLog().some((l) => l.startsWith('scroll '))).toBe(true);
  });

  it('says unverifiable when input changes nothing visible', async () => {
    const f = await g.launchFixture('mover');
    const shot = await screenshot(f.window.window_id);
    // The window's padding around the button: hovering there changes nothing.
    const { result } = await pixel({
      action: 'move',
      window_id: f.window.window_id,
      screenshot_id: shot.screenshot_id,
      delivery_mode: 'foreground',
      x: 3,
      y: shot.height - 3,
    });
    expect(result).toMatchObject({ effect: 'unverifiable', retry_safe: false });
  });

  it('types Unicode into an entry and it round-trips', async () => {
    const f = await g.launchFixture('typist');
    const shot = await screenshot(f.window.window_id);
    const text = 'Grüße ✓ 日本語のテキスト ok 😀 ñ Ω';
    const { result } = await pixel({
      action: 'type',
      window_id: f.window.window_id,
      screenshot_id: shot.screenshot_id,
      delivery_mode: 'foreground',
      text,
      focus_at: ENTRY,
    });
    expect(result).toMatchObject({
      effect: 'confirmed',
      delivery: { requested_count: [...text].length, delivered_count: [...text].length },
    });
    expect(f.readLog().at(-1)).toBe(`text ${text}`);
    expect(await titleOf(f.window.window_id)).toBe(`typist text:${text}`);

    const key = await pixel({
      action: 'key',
      window_id: f.window.window_id,
      screenshot_id: shot.screenshot_id,
      delivery_mode: 'foreground',
      keys: 'BackSpace',
      repeat: 3,
    });
    expect(key.result).toMatchObject({ effect: 'confirmed' });
    expect(f.readLog().at(-1)).toBe(`text ${[...text].slice(0, -3).join('')}`);

    const before = f.readLog().length;
    const unknown = await pixel({
      action: 'key',
      window_id: f.window.window_id,
      screenshot_id: shot.screenshot_id,
      delivery_mode: 'foreground',
      keys: 'NoSuchKeyName',
    });
    expect(unknown.result).toMatchObject({
      effect: 'refused',
      error: { code: 'unsupported_text' },
    });
    expect(f.readLog().length).toBe(before);
  });
});
