import { z } from 'zod';
import { named } from '../registry.js';
import { Rect } from './common.js';

/**
 * SnapshotId names one observe of one window. A new observe of the same window invalidates its
 * older snapshots, so a token can only ever point into what the agent last saw.
 */
export const SnapshotId = named(
  'GuestSnapshotId',
  z
    .string()
    .max(32)
    .regex(/^s[0-9a-zA-Z]+$/, 'snapshot ids look like s<snapshot>'),
);
export type SnapshotId = z.infer<typeof SnapshotId>;

/**
 * ElementToken is `s<snapshot>:<n>`: the n-th row of one snapshot. It is opaque to callers; the
 * driver binds it to the exact live AT-SPI object it came from plus a fingerprint (role, name,
 * ancestors' roles and names), and refuses rather than guesses when that binding no longer holds.
 * A malformed token fails validation (400) before anything is resolved.
 */
export const ElementToken = named(
  'GuestElementToken',
  z
    .string()
    .max(48)
    .regex(/^s[0-9a-zA-Z]+:[0-9]+$/, 'element tokens look like s<snapshot>:<n>'),
);
export type ElementToken = z.infer<typeof ElementToken>;

/**
 * ElementRole is the AT-SPI role name in snake_case (`push_button`, `check_box`, `text`,
 * `password_text`). It stays an open string: toolkits add roles faster than this contract would.
 */
export const ElementRole = named(
  'GuestElementRole',
  z
    .string()
    .min(1)
    .max(64)
    .regex(/^[a-z][a-z0-9_]*$/, 'AT-SPI role names in snake_case'),
);
export type ElementRole = z.infer<typeof ElementRole>;

/**
 * ElementState is the closed set of AT-SPI 2 states, in snake_case. The list is closed so that a
 * verify_state predicate naming a misspelt state fails validation instead of never matching; a
 * state added by a newer AT-SPI is dropped by the driver until it is added here.
 */
export const ElementState = named(
  'GuestElementState',
  z.enum([
    'active',
    'animated',
    'armed',
    'busy',
    'checkable',
    'checked',
    'collapsed',
    'defunct',
    'editable',
    'enabled',
    'expandable',
    'expanded',
    'focusable',
    'focused',
    'has_popup',
    'has_tooltip',
    'horizontal',
    'iconified',
    'indeterminate',
    'invalid_entry',
    'is_default',
    'manages_descendants',
    'modal',
    'multi_line',
    'multiselectable',
    'opaque',
    'pressed',
    'read_only',
    'required',
    'resizable',
    'selectable',
    'selectable_text',
    'selected',
    'sensitive',
    'showing',
    'single_line',
    'stale',
    'supports_autocompletion',
    'transient',
    'truncated',
    'vertical',
    'visible',
    'visited',
  ]),
);
export type ElementState = z.infer<typeof ElementState>;

/**
 * ElementActionName is what `act` can do to an element; a row's `actions` lists the ones its
 * AT-SPI interfaces support (Action, EditableText, Value, Selection, Component), so an agent
 * can see before trying that a label cannot be clicked or a button cannot take a value.
 */
export const ElementActionName = named(
  'GuestElementActionName',
  z.enum(['click', 'set_value', 'type_text', 'focus', 'toggle', 'select', 'scroll_into_view']),
);
export type ElementActionName = z.infer<typeof ElementActionName>;

/**
 * ReadableProperty names the properties of a row that can fail to read. Together with optional
 * fields this gives every property three states, as agent-desktop taught: present (known),
 * omitted (absent: the element has none), or listed in `unreadable` (unknown: the read failed).
 * Collapsing unknown into absent is what makes negative checks lie.
 */
export const ReadableProperty = named(
  'GuestReadableProperty',
  z.enum(['name', 'description', 'value', 'states', 'actions', 'frame']),
);
export type ReadableProperty = z.infer<typeof ReadableProperty>;

const rowFields = {
  element_token: ElementToken,
  role: ElementRole,
  /** Accessible name; omitted when the element has none. */
  name: z.string().max(4096).optional(),
  description: z.string().max(4096).optional(),
  states: z.array(ElementState),
  actions: z.array(ElementActionName),
  /** Screen coordinates (X11 root window); omitted for elements without a Component extent. */
  frame: Rect.optional(),
  /** Pixels of this response's screenshot; omitted without a screenshot or when off-image. */
  screenshot_frame: Rect.optional(),
  /** Depth below the window's root accessible (the window itself is 0). */
  depth: z.int().min(0),
  /** Token of the nearest returned ancestor; omitted for top rows of the response. */
  parent: ElementToken.optional(),
  unreadable: z.array(ReadableProperty).min(1).optional(),
  /**
   * Elements under this one left out of a lean observe because none of them is showing (a
   * closed menu's items); `include_hidden: true` returns them. Omitted when nothing was left out,
   * so returned rows plus these counts add up to the full tree.
   */
  hidden_descendants: z.int().min(1).optional(),
};

/**
 * ElementRow is one element of an observe. `value` is the text or numeric value as a string. A
 * secure field (AT-SPI `password_text`, or any element the toolkit marks as hiding its text) is
 * sent as the `redacted` variant, which has no `value` field at all: the schema itself rejects
 * a row that would leak a password, on the driver's side before it is sent.
 */
export const ElementRow = named(
  'GuestElementRow',
  z.union([
    z.strictObject({ ...rowFields, value: z.string().max(65_536).optional() }),
    z.strictObject({ ...rowFields, redacted: z.literal(true) }),
  ]),
);
export type ElementRow = z.infer<typeof ElementRow>;
