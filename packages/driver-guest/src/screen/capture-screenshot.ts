import {
  SCREENSHOT_DEFAULT_MAX_DIMENSION,
  type Rect,
  type ScreenshotImage,
  type ScreenshotRequest,
} from '@cubicle/contract/guest';
import { AppError } from '@cubicle/contract/errors';
import jpeg from 'jpeg-js';
import type { X11Display } from '../windows/x11/x11-display.js';
import { queryPointer } from '../windows/x11/x11-requests.js';
import { encodePng, encodeXImagePng } from './encode-png.js';
import { grabRaw, toRgb, type XImage } from './grab-screen.js';
import { downscale, fitScale, type RgbImage } from './scale-image.js';
import type { ScreenshotRegistry } from './screenshot-registry.js';
import { windowCaptureRect } from './window-rect.js';

export { windowCaptureRect };

export interface ScreenDeps {
  x11: X11Display;
  screenshots: ScreenshotRegistry;
}

function toRgba(img: RgbImage): Buffer {
  const out = Buffer.alloc(img.width * img.height * 4, 255);
  for (let i = 0, o = 0; i < img.data.length; i += 3, o += 4) {
    out[o] = img.data[i]!;
    out[o + 1] = img.data[i + 1]!;
    out[o + 2] = img.data[i + 2]!;
  }
  return out;
}

/**
 * regionOf clips a requested region (relative to the capture) to the capture rectangle, in
 * screen coordinates; a region that misses the capture entirely is 409 `conflict`.
 */
function regionOf(capture: Rect, region: Rect): Rect {
  const x0 = Math.max(capture.x, capture.x + region.x);
  const y0 = Math.max(capture.y, capture.y + region.y);
  const x1 = Math.min(capture.x + capture.w, capture.x + region.x + region.w);
  const y1 = Math.min(capture.y + capture.h, capture.y + region.y + region.h);
  if (x1 <= x0 || y1 <= y0)
    throw new AppError('conflict', `region ${JSON.stringify(region)} lies outside the capture`);
  return { x: x0, y: y0, w: x1 - x0, h: y1 - y0 };
}

/**
 * captureScreenshot captures the display or one window's client area (or a `region` of it),
 * downscales it to `max_dimension` and, unless it is a region, makes it the latest screenshot
 * of its window (or of the display): from then on pixel input is accepted only with this id.
 */
export async function captureScreenshot(
  deps: ScreenDeps,
  req: ScreenshotRequest,
): Promise<ScreenshotImage> {
  const x = await deps.x11.conn();
  const whole =
    req.window_id === undefined
      ? { x: 0, y: 0, w: x.setup.width, h: x.setup.height }
      : await windowCaptureRect(deps.x11, req.window_id);
  const rect = req.region ? regionOf(whole, req.region) : whole;
  const [grabbed, pointer] = await Promise.all([grabRaw(deps.x11, rect), queryPointer(x)]);
  const scale = fitScale(rect.w, rect.h, req.max_dimension ?? SCREENSHOT_DEFAULT_MAX_DIMENSION);
  const img = encode(grabbed, scale, req);
  const screenshotId = deps.screenshots.nextId();
  const origin = { x: rect.x, y: rect.y };
  if (!req.region)
    deps.screenshots.remember({
      screenshot_id: screenshotId,
      window_id: req.window_id ?? null,
      origin,
      scale,
      width: img.width,
      height: img.height,
    });
  return {
    screenshot_id: screenshotId,
    window_id: req.window_id ?? null,
    format: req.format ?? 'png',
    data: Buffer.from(img.data).toString('base64'),
    width: img.width,
    height: img.height,
    scale,
    origin,
    cursor: cursorIn(pointer, origin, scale, img),
  };
}

/**
 * encode scales and encodes a grab. A PNG at full size (the common case: a window) goes straight
 * from the server's pixels (encodeXImagePng), without an RGB copy in between.
 */
function encode(
  grabbed: XImage,
  scale: number,
  req: ScreenshotRequest,
): { data: Uint8Array; width: number; height: number } {
  const size = { width: grabbed.width, height: grabbed.height };
  if (scale === 1 && req.format !== 'jpeg') return { data: encodeXImagePng(grabbed), ...size };
  const img = downscale(toRgb(grabbed), scale);
  const data =
    req.format === 'jpeg'
      ? jpeg.encode({ data: toRgba(img), width: img.width, height: img.height }, req.quality).data
      : encodePng(img.data, img.width, img.height);
  return { data, width: img.width, height: img.height };
}

/** cursorIn maps the pointer's screen position into the image's pixels; null when outside. */
function cursorIn(
  pointer: { x: number; y: number },
  origin: { x: number; y: number },
  scale: number,
  img: { width: number; height: number },
): { x: number; y: number } | null {
  const px = Math.floor((pointer.x - origin.x) * scale);
  const py = Math.floor((pointer.y - origin.y) * scale);
  return px >= 0 && py >= 0 && px < img.width && py < img.height ? { x: px, y: py } : null;
}
