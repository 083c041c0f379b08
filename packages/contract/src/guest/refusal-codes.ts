import { z } from 'zod';
import type { ErrorCode } from '../errors/envelope.js';
import { named } from '../registry.js';

/**
 * RefusalCodes is the closed list of reasons an action is refused: the driver decided not to
 * deliver anything, so the caller may fix the cause and retry safely. A refusal is a result, not
 * a transport error: act endpoints answer 200 with `effect: "refused"`. Codes shared with the
 * REST API's ErrorCodes keep the same name and meaning (checked below), so the control plane can
 * surface a refusal as an error without a translation table.
 */
export const RefusalCodes = {
  /** The token's element is gone, or was renamed or re-roled since the snapshot. Observe again. */
  stale_element_token: 'The element token no longer resolves to the element it was issued for.',
  /** Identity would have to be guessed from the fingerprint and more than one live element fits. */
  ambiguous_target: 'More than one live element matches and none can be chosen without guessing.',
  /** Pixel input named a screenshot that is not the latest one of that window. */
  stale_screenshot: 'Pixel input must refer to the latest screenshot of the window.',
  /** The window is gone or never existed. */
  window_not_found: 'The guest has no window with this id.',
  /** The element does not expose the requested action (e.g. set_value on a push button). */
  action_not_supported: 'The element does not support this action; its row lists the ones it does.',
  /** The element is insensitive or disabled, so the app would ignore the input. */
  element_disabled: 'The element is not enabled (not sensitive).',
  /** The element or point is outside the visible window and a background route cannot reach it. */
  element_offscreen: 'The element is not showing; scroll it into view first.',
  /** Pixel coordinates fall outside the screenshot they are measured in. */
  point_out_of_bounds: 'The point lies outside the screenshot.',
  /** Only a foreground route could deliver this, and the request allowed background only. */
  foreground_required:
    'This input can only be delivered in the foreground; ask with delivery_mode "foreground".',
  /** The text has characters no keymap or AT-SPI route can produce. */
  unsupported_text: 'The text contains characters that cannot be typed into this element.',
  /** The value is not acceptable for the element (out of range for a slider, not a number). */
  invalid_value: 'The element cannot take this value.',
} as const satisfies Record<string, string>;

export type RefusalCodeName = keyof typeof RefusalCodes;

/**
 * RefusalCodesSharedWithApi are the refusal codes that are also REST error codes; the `satisfies`
 * makes the build fail if either list renames one.
 */
export const RefusalCodesSharedWithApi = [
  'stale_element_token',
  'ambiguous_target',
  'stale_screenshot',
  'window_not_found',
] as const satisfies readonly (z.infer<typeof ErrorCode> & RefusalCodeName)[];

export const RefusalCode = named(
  'GuestRefusalCode',
  z.enum(Object.keys(RefusalCodes) as [RefusalCodeName, ...RefusalCodeName[]]),
);
export type RefusalCode = z.infer<typeof RefusalCode>;
