import {
  SCREENSHOT_DEFAULT_MAX_DIMENSION,
  type Rect,
  type ScreenshotImage,
  type ScreenshotRequest,
} from '@cubicle/contract/guest';
import { AppError } from '@cubicle/contract/errors';
import jpeg from 'jpeg-js';
import { findWindow } from '../windows/list-windows.js';
import type { X11Display } from '../windows/x11/x11-display.js';
import { encodePng } from './encode-png.js';
import { clipToScreen, grabScreen } from './grab-screen.js';
import { downscale, fitScale, type RgbImage } from './scale-image.js';
import type { ScreenshotRegistry } from './screenshot-registry.js';

export interface ScreenDeps {
  x11: X11Display;
  screenshots: ScreenshotRegistry;
}

/**
 * windowCaptureRect is the part of a window's client area that is on screen. A minimized or
 * fully off-screen window has no pixels to capture: 409 `conflict`, so the caller restores it.
 */
export async function windowCaptureRect(x11: X11Display, windowId: number): Promise<Rect> {
  const win = await findWindow(x11, windowId);
  if (!win) throw new AppError('window_not_found', `no window ${windowId}`);
  const x = await x11.conn();
  const rect = win.minimized ? null : clipToScreen(win.client, x.setup);
  if (!rect) throw new AppError('conflict', `window ${windowId} is minimized or off screen`);
  return rect;
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
 * captureScreenshot captures the display or one window's client area, downscales it to
 * `max_dimension` and, for a window, makes it that window's latest screenshot: from then on
 * pixel input is accepted only with this id.
 */
export async function captureScreenshot(
  deps: ScreenDeps,
  req: ScreenshotRequest,
): Promise<ScreenshotImage> {
  const x = await deps.x11.conn();
  const rect =
    req.window_id === undefined
      ? { x: 0, y: 0, w: x.setup.width, h: x.setup.height }
      : await windowCaptureRect(deps.x11, req.window_id);
  const full = await grabScreen(deps.x11, rect);
  const scale = fitScale(rect.w, rect.h, req.max_dimension ?? SCREENSHOT_DEFAULT_MAX_DIMENSION);
  const img = downscale(full, scale);
  const data =
    req.format === 'jpeg'
      ? jpeg.encode({ data: toRgba(img), width: img.width, height: img.height }, req.quality).data
      : encodePng(img.data, img.width, img.height);
  const screenshotId = deps.screenshots.nextId();
  const origin = { x: rect.x, y: rect.y };
  if (req.window_id !== undefined)
    deps.screenshots.remember({
      screenshot_id: screenshotId,
      window_id: req.window_id,
      origin,
      scale,
      width: img.width,
      height: img.height,
    });
  return {
    screenshot_id: screenshotId,
    window_id: req.window_id ?? null,
    format: req.format ?? 'png',
    data: Buffer.from(data).toString('base64'),
    width: img.width,
    height: img.height,
    scale,
    origin,
  };
}
