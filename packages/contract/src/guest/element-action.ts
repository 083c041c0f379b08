import { z } from 'zod';
import { named } from '../registry.js';
import { text } from '../text.js';
import { DeliveryMode, WindowId } from './common.js';
import { ElementToken } from './element.js';

/** TYPE_TEXT_MAX_CHARS bounds typed text: typing is slow and a runaway string floods the app. */
export const TYPE_TEXT_MAX_CHARS = 10_000;
/** SET_VALUE_MAX_CHARS bounds set_value, which replaces the text in one call. */
export const SET_VALUE_MAX_CHARS = 65_536;

/**
 * Every element action names its window as well as its token: the token already implies the
 * window, and a mismatch (a token pasted from another window's snapshot) is refused rather than
 * followed, in the spirit of re-stating the target on every call.
 */
const target = {
  window_id: WindowId,
  element_token: ElementToken,
  /**
   * Omitted, the driver chooses per element and says so in `delivery` (`auto_selected: true`):
   * background where the element takes the action through AT-SPI, foreground where only the
   * keyboard focus reaches it (Chromium's web fields, spreadsheet cells, terminals). A default
   * of `background` refused typing into every web form unless the caller knew to ask for
   * foreground. Named explicitly, the mode is honoured: `background` is refused where the
   * element cannot take it, never turned into foreground.
   */
  delivery_mode: DeliveryMode.optional().meta({
    description:
      'Omitted: the driver picks background where the element takes the action through AT-SPI, else foreground, and reports `delivery.auto_selected`. Named: honoured or refused.',
  }),
};

const action = <A extends string, S extends z.core.$ZodLooseShape>(name: A, shape: S) =>
  z.strictObject({ action: z.literal(name), ...target, ...shape });

/**
 * ElementActionRequest acts on one element of the latest snapshot of its window.
 * - `click`: the element's default AT-SPI action (press, click or activate, as the toolkit names it);
 * - `set_value`: replace the text (EditableText) or numeric value (Value) with `value`;
 * - `type_text`: insert `text` at the caret, as typing would, without clearing what is there;
 * - `focus`: give the element keyboard focus (Component.GrabFocus);
 * - `toggle`: flip a check box, radio or toggle button; with `checked`, only act if it differs,
 *   so asking twice is idempotent where a bare toggle would undo itself (already so: `confirmed`
 *   by a state read-back, with `delivered_count: 0`);
 * - `select`: select this item in its parent's Selection (list rows, tabs, combo items);
 * - `scroll_into_view`: scroll ancestors so the element is showing.
 * Values typed into secure fields are accepted but never echoed back, logged or recorded.
 */
export const ElementActionRequest = named(
  'GuestElementActionRequest',
  z.discriminatedUnion('action', [
    action('click', {}),
    action('set_value', { value: text().max(SET_VALUE_MAX_CHARS) }),
    action('type_text', { text: text().min(1).max(TYPE_TEXT_MAX_CHARS) }),
    action('focus', {}),
    action('toggle', { checked: z.boolean().optional() }),
    action('select', {}),
    action('scroll_into_view', {}),
  ]),
);
export type ElementActionRequest = z.infer<typeof ElementActionRequest>;
