import { setTimeout as sleep } from 'node:timers/promises';
import type { ActionEvidence, Rect } from '@cubicle/contract/guest';
import { clipToScreen, grabScreen } from '../screen/grab-screen.js';
import type { RgbImage } from '../screen/scale-image.js';
import { findWindow } from '../windows/list-windows.js';
import type { X11Display } from '../windows/x11/x11-display.js';

/** WindowSnapshot is what a window (or, `windowId` null, the display) looked like before an action. */
export interface WindowSnapshot {
  windowId: number | null;
  title: string;
  rect: Rect | null;
  pixels: RgbImage | null;
}

/** snapshotWindow records the title and on-screen pixels of a window (not a ScreenshotId). */
export async function snapshotWindow(
  x11: X11Display,
  windowId: number | null,
): Promise<WindowSnapshot | null> {
  if (windowId === null) {
    const { setup } = await x11.conn();
    const rect = { x: 0, y: 0, w: setup.width, h: setup.height };
    return { windowId, title: '', rect, pixels: await grabScreen(x11, rect) };
  }
  const win = await findWindow(x11, windowId);
  if (!win) return null;
  const x = await x11.conn();
  const rect = win.minimized ? null : clipToScreen(win.client, x.setup);
  return { windowId, title: win.title, rect, pixels: rect ? await grabScreen(x11, rect) : null };
}

/**
 * diffRegion compares two grabs of the same rectangle: the changed share and bounding box.
 * A change no wider than 3 pixels is ignored: that is a blinking text caret, which toggles on its
 * own timer and would otherwise "confirm" any action taken near an entry.
 */
export function diffRegion(
  a: RgbImage,
  b: RgbImage,
  origin: { x: number; y: number },
): { ratio: number; region: Rect } | null {
  if (a.width !== b.width || a.height !== b.height) return null;
  let changed = 0;
  let [x0, y0, x1, y1] = [a.width, a.height, -1, -1];
  for (let y = 0; y < a.height; y += 1) {
    for (let x = 0; x < a.width; x += 1) {
      const i = (y * a.width + x) * 3;
      if (
        a.data[i] === b.data[i] &&
        a.data[i + 1] === b.data[i + 1] &&
        a.data[i + 2] === b.data[i + 2]
      )
        continue;
      changed += 1;
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      if (y > y1) y1 = y;
    }
  }
  if (changed === 0 || x1 - x0 + 1 <= 3) return null;
  return {
    ratio: changed / (a.width * a.height),
    region: { x: origin.x + x0, y: origin.y + y0, w: x1 - x0 + 1, h: y1 - y0 + 1 },
  };
}

/**
 * waitForChange polls the window for up to `ms` after an action and returns evidence of any
 * change: the window closed, its title changed, or its pixels changed. Empty means nothing
 * was seen, which is "unverifiable", not "failed": an effect can be invisible or slow.
 */
export async function waitForChange(
  x11: X11Display,
  before: WindowSnapshot,
  ms = 300,
): Promise<ActionEvidence[]> {
  const deadline = performance.now() + ms;
  for (;;) {
    const id = before.windowId;
    const now = await snapshotWindow(x11, id);
    // The display never closes, retitles or resizes: only its pixels can show a change.
    if (!now)
      return id === null ? [] : [{ kind: 'window_change', change: 'closed', window_id: id }];
    const evidence: ActionEvidence[] = [];
    if (id !== null && now.title !== before.title)
      evidence.push({
        kind: 'window_change',
        change: 'title_changed',
        window_id: id,
        title: now.title,
      });
    const sameRect =
      before.rect && now.rect && JSON.stringify(before.rect) === JSON.stringify(now.rect);
    if (id !== null && !sameRect && before.rect && now.rect)
      evidence.push({ kind: 'window_change', change: 'geometry_changed', window_id: id });
    if (sameRect && before.pixels && now.pixels) {
      const diff = diffRegion(before.pixels, now.pixels, now.rect!);
      if (diff)
        evidence.push({ kind: 'screenshot_diff', changed_ratio: diff.ratio, region: diff.region });
    }
    if (evidence.length > 0 || performance.now() >= deadline) return evidence;
    await sleep(30);
  }
}
