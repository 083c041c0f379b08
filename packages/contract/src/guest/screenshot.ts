import { z } from 'zod';
import { named } from '../registry.js';
import { Point, Rect, WindowId } from './common.js';

/**
 * SCREENSHOT_DEFAULT_MAX_DIMENSION is the default long edge in pixels. Vision models downscale
 * anything larger themselves, and coordinates a model reads off an image it never saw at full
 * size would then be off; sending the size the model sees keeps pixel input exact.
 */
export const SCREENSHOT_DEFAULT_MAX_DIMENSION = 1568;
export const SCREENSHOT_MIN_DIMENSION = 64;
export const SCREENSHOT_MAX_DIMENSION = 8192;

/**
 * ScreenshotId names one captured image. Pixel input must quote the id of the latest screenshot
 * of its window (from `screenshot` or an observe); anything older is refused `stale_screenshot`,
 * because the window may have moved or re-laid out since.
 */
export const ScreenshotId = named(
  'GuestScreenshotId',
  z
    .string()
    .max(32)
    .regex(/^p[0-9a-zA-Z]+$/, 'screenshot ids look like p<n>'),
);
export type ScreenshotId = z.infer<typeof ScreenshotId>;

const captureFields = {
  /** The window to capture; omitted for the whole display (not usable for pixel input). */
  window_id: WindowId.optional(),
  max_dimension: z
    .int()
    .min(SCREENSHOT_MIN_DIMENSION)
    .max(SCREENSHOT_MAX_DIMENSION)
    .default(SCREENSHOT_DEFAULT_MAX_DIMENSION),
  /**
   * A part of the capture, in screen pixels relative to the window's client area (or the
   * display's top-left): a close look at one region (computer-use `zoom`). It is clipped to the
   * capture; a region capture is never the latest screenshot, so it cannot anchor pixel input.
   */
  region: Rect.optional(),
};

/** ScreenshotRequest: PNG by default; `quality` exists only for JPEG. */
export const ScreenshotRequest = named(
  'GuestScreenshotRequest',
  z.discriminatedUnion('format', [
    z.strictObject({ ...captureFields, format: z.literal('png').default('png') }),
    z.strictObject({
      ...captureFields,
      format: z.literal('jpeg'),
      quality: z.int().min(1).max(100).default(80),
    }),
  ]),
);
export type ScreenshotRequest = z.infer<typeof ScreenshotRequest>;

/**
 * ScreenshotImage is a captured image with what is needed to map its pixels to the screen:
 * screen = origin + pixel / scale. Observe rows carry `screenshot_frame` already mapped.
 */
export const ScreenshotImage = named(
  'GuestScreenshotImage',
  z.strictObject({
    screenshot_id: ScreenshotId,
    /** Null for a capture of the whole display. */
    window_id: WindowId.nullable(),
    format: z.enum(['png', 'jpeg']),
    data: z.base64(),
    width: z.int().min(1),
    height: z.int().min(1),
    /** Image pixels per screen pixel: 1 at full size, below 1 when downscaled. */
    scale: z.number().gt(0).max(1),
    /** Screen position of the image's top-left pixel. */
    origin: Point,
    /**
     * Where the pointer was, in this image's pixels; null when it is outside the image. Absent
     * from drivers older than the field.
     */
    cursor: Point.nullable().optional(),
  }),
);
export type ScreenshotImage = z.infer<typeof ScreenshotImage>;
