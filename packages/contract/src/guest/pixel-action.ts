import { z } from 'zod';
import { named } from '../registry.js';
import { text } from '../text.js';
import { DeliveryMode, WindowId } from './common.js';
import { TYPE_TEXT_MAX_CHARS } from './element-action.js';
import { ScreenshotId } from './screenshot.js';

/**
 * PixelPoint is a position in the pixels of a screenshot (after any downscale), never in screen
 * coordinates: the driver maps it with that screenshot's origin and scale, so an agent never adds
 * window offsets itself (mixing the two systems is how clicks miss by a title bar).
 */
export const PixelPoint = named(
  'GuestPixelPoint',
  z.strictObject({ x: z.int().min(0), y: z.int().min(0) }),
);
export type PixelPoint = z.infer<typeof PixelPoint>;

export const KeyModifier = named('GuestKeyModifier', z.enum(['ctrl', 'shift', 'alt', 'super']));
export type KeyModifier = z.infer<typeof KeyModifier>;

/**
 * KeyCombo is zero or more modifiers and one X keysym name joined by `+`: `Return`, `ctrl+s`,
 * `ctrl+shift+Tab`, `KP_Add`. Keysym names rather than characters keep `+` itself unambiguous
 * (`plus`); text goes through `type` instead.
 */
export const KeyCombo = named(
  'GuestKeyCombo',
  z
    .string()
    .max(64)
    .regex(
      /^(?:(?:ctrl|shift|alt|super)\+)*[A-Za-z0-9_]+$/,
      'modifiers (ctrl, shift, alt, super) and one keysym name joined by +',
    ),
);
export type KeyCombo = z.infer<typeof KeyCombo>;

/**
 * Pixel input is accepted only against the latest screenshot of its window (`screenshot_id`),
 * including keyboard input: it proves the caller looked at the window as it is now. Without
 * `window_id` it is measured in the latest whole-display screenshot instead, as computer-use
 * agents see the screen: the input goes to whatever is at the point (nothing is raised first).
 * `delivery_mode` defaults to `foreground`, the one route every backend has for pixels (XTest
 * moves the real pointer and focus): a default must work on the first try. `background` is for
 * callers that forbid taking the pointer; a backend that cannot honour it refuses with
 * `foreground_required`, and element actions (`act`) are the background path.
 */
const base = {
  window_id: WindowId.optional(),
  screenshot_id: ScreenshotId,
  delivery_mode: DeliveryMode.default('foreground'),
};
const at = PixelPoint.shape;
const modifiers = z.array(KeyModifier).max(4).optional();
// New fields are optional rather than defaulted, so requests recorded before them still type.
const button = z.enum(['left', 'middle', 'right']).optional().describe('default left');

/** KEY_HOLD_MAX_MS bounds how long `key` may hold its combo down (computer-use `hold_key`). */
export const KEY_HOLD_MAX_MS = 30_000;

const pixel = <A extends string, S extends z.core.$ZodLooseShape>(name: A, shape: S) =>
  z.strictObject({ action: z.literal(name), ...base, ...shape });

/**
 * PixelActionRequest is input at screenshot pixels, for what the accessibility tree does not
 * reach (canvases, custom widgets). The driver raises the window and sends the input through
 * XTest (`route: "xtest"`, `delivery.mode: "foreground"`).
 * - `click` presses `button` `count` times (3: a triple click, which selects a line);
 * - `drag` presses at (x, y) and releases at (to_x, to_y);
 * - `mouse_down` / `mouse_up` press or release `button` at (x, y), for gestures `drag` does not
 *   cover (a press held across other input); the driver never releases a button by itself;
 * - `scroll` turns the wheel `dx`/`dy` notches at (x, y) (positive: right, down);
 * - `type` and `key` go to the window's focused element, after clicking `focus_at` if given;
 *   `key` with `hold_ms` keeps the combo down that long before releasing it.
 */
export const PixelActionRequest = named(
  'GuestPixelActionRequest',
  z.discriminatedUnion('action', [
    pixel('click', {
      ...at,
      modifiers,
      /** back and forward are X buttons 8 and 9 (a mouse's side buttons). */
      button: z
        .enum(['left', 'middle', 'right', 'back', 'forward'])
        .optional()
        .describe('default left'),
      count: z.int().min(1).max(3).optional().describe('default 1'),
    }),
    pixel('double_click', { ...at, modifiers }),
    pixel('right_click', { ...at, modifiers }),
    pixel('move', at),
    pixel('drag', {
      ...at,
      to_x: z.int().min(0),
      to_y: z.int().min(0),
      button: z.enum(['left', 'middle', 'right']).default('left'),
    }),
    pixel('mouse_down', { ...at, button }),
    pixel('mouse_up', { ...at, button }),
    pixel('scroll', {
      ...at,
      modifiers,
      dx: z.int().min(-50).max(50).default(0),
      dy: z.int().min(-50).max(50).default(0),
    })
      .refine((s) => s.dx !== 0 || s.dy !== 0, {
        message: 'scroll needs a non-zero dx or dy',
        path: ['dy'],
      })
      .meta({
        description: 'dx and dy are not both 0 (a missing one is 0).',
        not: { properties: { dx: { const: 0 }, dy: { const: 0 } } },
      }),
    pixel('type', {
      /** Any Unicode text; characters without a keysym are typed through a spare keycode. */
      text: text().min(1).max(TYPE_TEXT_MAX_CHARS),
      focus_at: PixelPoint.optional(),
    }),
    pixel('key', {
      keys: KeyCombo,
      repeat: z.int().min(1).max(100).default(1),
      hold_ms: z.int().min(0).max(KEY_HOLD_MAX_MS).optional().describe('default 0'),
      focus_at: PixelPoint.optional(),
    }),
  ]),
);
export type PixelActionRequest = z.infer<typeof PixelActionRequest>;
