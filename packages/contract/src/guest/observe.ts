import { z } from 'zod';
import { named } from '../registry.js';
import { text } from '../text.js';
import { DurationMs, Pid, WindowId } from './common.js';
import { ElementRole, ElementRow, ElementToken, SnapshotId } from './element.js';
import {
  ScreenshotImage,
  SCREENSHOT_DEFAULT_MAX_DIMENSION,
  SCREENSHOT_MAX_DIMENSION,
  SCREENSHOT_MIN_DIMENSION,
} from './screenshot.js';

export const OBSERVE_DEFAULT_MAX_ELEMENTS = 500;
export const OBSERVE_MAX_ELEMENTS = 10_000;
export const OBSERVE_DEFAULT_MAX_DEPTH = 64;

/**
 * ObserveRequest (`get_window_state`) reads the accessibility tree of one window. `query` and
 * `roles` filter which rows are returned; filtered rows are not "truncated", and their absence
 * from a filtered response says nothing about the window.
 *
 * Without a filter the default is lean: what a person could see. A subtree with nothing in the
 * AT-SPI `showing` state (a closed menu's items, an off-screen part of a page) is left out and
 * counted in `hidden_descendants` of the row above it (the menu's own row on the menu bar). An
 * empty Writer window is 1,933 elements (525 KB) of which 183 are showing (47 KB); an agent pays
 * for every byte in tokens. A filter searches the whole
 * tree, hidden parts included (its answer is already small and names what was asked for).
 *
 * With `since` the answer is a diff against that snapshot (see ObserveDiff): what was added,
 * changed and removed, rather than every row again.
 */
export const ObserveRequest = named(
  'GuestObserveRequest',
  z.strictObject({
    window_id: WindowId,
    /** Case-insensitive substring matched against name, description and (non-secure) value. */
    query: text().min(1).max(256).optional(),
    roles: z.array(ElementRole).min(1).max(32).optional(),
    max_elements: z.int().min(1).max(OBSERVE_MAX_ELEMENTS).default(OBSERVE_DEFAULT_MAX_ELEMENTS),
    max_depth: z.int().min(1).max(256).default(OBSERVE_DEFAULT_MAX_DEPTH),
    /**
     * true: every element, hidden subtrees unrolled (the full tree; what observe returned before
     * lean observations). The way to expand a row that carries `hidden_descendants`.
     */
    include_hidden: z.boolean().default(false),
    /**
     * Answer as a diff against this snapshot, the window's latest: `diff` lists the rows added
     * and changed and the tokens removed; `elements` is empty. Tokens of rows that are still
     * there keep working (they bind to the new snapshot too), so an agent that observed once
     * pays only for what changed. A snapshot that is not the window's latest (unknown, replaced
     * by a newer observe, or another window's) is refused with 422 `stale_snapshot`. Ask with
     * the same filters as the base: a row a different filter leaves out is reported removed.
     */
    since: SnapshotId.optional(),
    include_screenshot: z.boolean().default(true),
    max_dimension: z
      .int()
      .min(SCREENSHOT_MIN_DIMENSION)
      .max(SCREENSHOT_MAX_DIMENSION)
      .default(SCREENSHOT_DEFAULT_MAX_DIMENSION),
  }),
);
export type ObserveRequest = z.infer<typeof ObserveRequest>;

/**
 * TruncationReason says why rows are missing. A truncated response is never evidence that an
 * element is absent: verify_state answers `unknown` rather than `satisfied` for an absence it
 * could not fully read.
 */
export const TruncationReason = named(
  'GuestTruncationReason',
  z.enum(['max_elements', 'max_depth', 'time_budget']),
);
export type TruncationReason = z.infer<typeof TruncationReason>;

/**
 * DegradedReason says why the observation is less than it should be. An empty tree with
 * `app_not_accessible` means "cannot see", never "nothing there".
 */
export const DegradedReason = named(
  'GuestDegradedReason',
  z.enum([
    /** The AT-SPI bus is not reachable at all. */
    'a11y_bus_unavailable',
    /** The app exposes no accessibility tree (no atk-bridge, a canvas-only or a crashed bridge). */
    'app_not_accessible',
    /** Some property reads failed; the affected rows list them in `unreadable`. */
    'properties_unreadable',
    /** The tree changed while it was read; rows may mix two states of the window. */
    'tree_changed_during_read',
    /** A screenshot was asked for and could not be captured; pixel input is unavailable. */
    'screenshot_unavailable',
    /** The window is minimised or unmapped: frames and the screenshot are not meaningful. */
    'window_not_visible',
  ]),
);
export type DegradedReason = z.infer<typeof DegradedReason>;

/**
 * ObserveDiff is the answer to an observe with `since`: the window now, against that snapshot.
 * A row keeps its token when it is the same live object with the same identity (role, name,
 * ancestors' roles and names); its row is listed in `changed` when anything else in it changed
 * (value, states, actions, frame, depth, parent, hidden count), and not at all when nothing did.
 * A row whose identity changed (renamed) is removed under its old token and added under a new
 * one. `screenshot_frame` is not compared (it follows the screenshot, not the element).
 */
export const ObserveDiff = named(
  'GuestObserveDiff',
  z.strictObject({
    /** The snapshot this diff is against (the request's `since`). */
    since: SnapshotId,
    /** Rows that were not in the base snapshot, with new tokens. */
    added: z.array(ElementRow),
    /** Rows of the base whose content changed; same tokens as before. */
    changed: z.array(ElementRow),
    /** Tokens of the base's rows that are no longer in the view (gone, hidden, renamed); now stale. */
    removed: z.array(ElementToken),
    /** Rows of the base still there unchanged: their tokens keep working. */
    unchanged_count: z.int().min(0),
  }),
);
export type ObserveDiff = z.infer<typeof ObserveDiff>;

/**
 * ObserveResponse is one snapshot. `truncated` and `degraded` are `false` or an object whose
 * reasons list is never empty, so "truncated without a reason" cannot be expressed.
 */
export const ObserveResponse = named(
  'GuestObserveResponse',
  z.strictObject({
    snapshot_id: SnapshotId,
    /**
     * Older snapshots of this window that this observe invalidated; their tokens are now stale.
     * A diff invalidates none as a whole: its stale tokens are listed in `diff.removed`.
     */
    invalidated_snapshot_ids: z.array(SnapshotId),
    window: z.strictObject({
      window_id: WindowId,
      title: z.string().max(4096),
      pid: Pid.nullable(),
      app: z.string().max(256).nullable(),
    }),
    /** Every row of the view; empty in a diff, whose rows are in `diff`. */
    elements: z.array(ElementRow),
    /** Present exactly when the request had `since`. */
    diff: ObserveDiff.optional(),
    truncated: z.union([
      z.literal(false),
      z.strictObject({
        reasons: z.array(TruncationReason).min(1),
        /** Elements seen but not returned, when the driver could count them. */
        omitted_count: z.int().min(1).optional(),
      }),
    ]),
    degraded: z.union([
      z.literal(false),
      z.strictObject({
        reasons: z.array(DegradedReason).min(1),
        detail: z.string().max(1024).optional(),
      }),
    ]),
    /** Present when asked for and captured; it becomes the window's latest screenshot. */
    screenshot: ScreenshotImage.optional(),
    duration_ms: DurationMs,
  }),
);
export type ObserveResponse = z.infer<typeof ObserveResponse>;
