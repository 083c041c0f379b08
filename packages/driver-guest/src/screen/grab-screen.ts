import type { Rect } from '@cubicle/contract/guest';
import type { X11Display } from '../windows/x11/x11-display.js';
import { getImage } from '../windows/x11/x11-requests.js';
import type { RgbImage } from './scale-image.js';

/** clipToScreen intersects a screen rectangle with the display; null when nothing is visible. */
export function clipToScreen(rect: Rect, screen: { width: number; height: number }): Rect | null {
  const x0 = Math.max(0, rect.x);
  const y0 = Math.max(0, rect.y);
  const x1 = Math.min(screen.width, rect.x + rect.w);
  const y1 = Math.min(screen.height, rect.y + rect.h);
  return x1 > x0 && y1 > y0 ? { x: x0, y: y0, w: x1 - x0, h: y1 - y0 } : null;
}

const shiftOf = (mask: number) => (mask === 0 ? 0 : 31 - Math.clz32(mask & -mask));

/** XImage is a rectangle as the server sent it: 32-bit little-endian pixels and their masks. */
export interface XImage {
  width: number;
  height: number;
  raw: Buffer;
  redMask: number;
  greenMask: number;
  blueMask: number;
}

/**
 * grabRaw reads a rectangle of the root window (what is on screen, including whatever covers
 * the window) through one GetImage request, undecoded. Only 32-bit ZPixmaps are handled, which
 * is what Xvfb serves at depth 24; other servers are refused rather than decoded wrongly.
 */
export async function grabRaw(d: X11Display, rect: Rect): Promise<XImage> {
  const x = await d.conn();
  const { bitsPerPixel, redMask, greenMask, blueMask, isLittleEndianImage } = x.setup;
  if (bitsPerPixel !== 32 || !isLittleEndianImage)
    throw new Error(`unsupported pixel format: ${bitsPerPixel} bpp`);
  const raw = await getImage(x, x.setup.root, rect);
  return { width: rect.w, height: rect.h, raw, redMask, greenMask, blueMask };
}

/** isBgrx: the usual layout (Xvfb at depth 24), blue in the first byte of each pixel. */
export function isBgrx(img: XImage): boolean {
  return img.redMask === 0xff0000 && img.greenMask === 0xff00 && img.blueMask === 0xff;
}

/** toRgb decodes an XImage to 8-bit RGB. */
export function toRgb(img: XImage): RgbImage {
  const { raw, redMask, greenMask, blueMask } = img;
  const count = img.width * img.height;
  const data = Buffer.alloc(count * 3);
  if (isBgrx(img)) {
    for (let p = 0, i = 0, o = 0; p < count; p += 1, i += 4, o += 3) {
      data[o] = raw[i + 2]!;
      data[o + 1] = raw[i + 1]!;
      data[o + 2] = raw[i]!;
    }
  } else {
    const [rs, gs, bs] = [shiftOf(redMask), shiftOf(greenMask), shiftOf(blueMask)];
    for (let p = 0, o = 0; p < count; p += 1, o += 3) {
      const v = raw.readUInt32LE(p * 4);
      data[o] = ((v & redMask) >>> rs) & 0xff;
      data[o + 1] = ((v & greenMask) >>> gs) & 0xff;
      data[o + 2] = ((v & blueMask) >>> bs) & 0xff;
    }
  }
  return { width: img.width, height: img.height, data };
}

/** grabScreen reads a rectangle of the root window as RGB (grabRaw, then toRgb). */
export async function grabScreen(d: X11Display, rect: Rect): Promise<RgbImage> {
  return toRgb(await grabRaw(d, rect));
}
