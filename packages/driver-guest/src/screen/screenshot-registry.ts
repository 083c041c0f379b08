import { randomBytes } from 'node:crypto';
import type { Point, ScreenshotId, WindowId } from '@cubicle/contract/guest';

/** ScreenshotMapping is what pixel input needs to turn image pixels into screen coordinates. */
export interface ScreenshotMapping {
  screenshot_id: ScreenshotId;
  /** Null for a capture of the whole display. */
  window_id: WindowId | null;
  origin: Point;
  scale: number;
  width: number;
  height: number;
}

export type ScreenshotCheck =
  { ok: true; mapping: ScreenshotMapping } | { ok: false; latest: ScreenshotId | null };

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * ScreenshotRegistry remembers the latest screenshot of each window. Ids carry a per-process
 * boot prefix, so an id from before a driver restart can never equal a new one and pass as
 * latest. The display's latest capture is kept under `null`: pixel input without a window is
 * measured in it (computer-use agents look at the whole screen).
 */
export class ScreenshotRegistry {
  private readonly boot = [...randomBytes(6)].map((b) => ALPHABET[b % 36]).join('');
  private counter = 0;
  private readonly latest = new Map<WindowId | null, ScreenshotMapping>();

  nextId(): ScreenshotId {
    this.counter += 1;
    return `p${this.boot}${this.counter.toString(36)}`;
  }

  /** remember makes `mapping` the latest screenshot of its window, superseding older ones. */
  remember(mapping: ScreenshotMapping): void {
    this.latest.set(mapping.window_id, mapping);
  }

  check(windowId: WindowId | null, screenshotId: ScreenshotId): ScreenshotCheck {
    const mapping = this.latest.get(windowId);
    if (mapping && mapping.screenshot_id === screenshotId) return { ok: true, mapping };
    return { ok: false, latest: mapping?.screenshot_id ?? null };
  }

  /** forget drops a closed window's record (XIDs are reused by the server). */
  forget(windowId: WindowId): void {
    this.latest.delete(windowId);
  }
}

/**
 * toScreen maps a pixel of a screenshot to root-window coordinates: origin + pixel / scale,
 * aiming at the centre of the screen pixels the image pixel covers. Null when the pixel is
 * outside the image.
 */
export function toScreen(m: ScreenshotMapping, px: { x: number; y: number }): Point | null {
  if (px.x < 0 || px.y < 0 || px.x >= m.width || px.y >= m.height) return null;
  return {
    x: m.origin.x + Math.floor((px.x + 0.5) / m.scale),
    y: m.origin.y + Math.floor((px.y + 0.5) / m.scale),
  };
}
