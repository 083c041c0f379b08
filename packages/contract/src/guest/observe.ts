import { z } from 'zod';
import { named } from '../registry.js';
import { text } from '../text.js';
import { DurationMs, Pid, WindowId } from './common.js';
import { ElementRole, ElementRow, SnapshotId } from './element.js';
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
 * ObserveResponse is one snapshot. `truncated` and `degraded` are `false` or an object whose
 * reasons list is never empty, so "truncated without a reason" cannot be expressed.
 */
export const ObserveResponse = named(
  'GuestObserveResponse',
  z.strictObject({
    snapshot_id: SnapshotId,
    /** Older snapshots of this window that this observe invalidated; their tokens are now stale. */
    invalidated_snapshot_ids: z.array(SnapshotId),
    window: z.strictObject({
      window_id: WindowId,
      title: z.string().max(4096),
      pid: Pid.nullable(),
      app: z.string().max(256).nullable(),
    }),
    elements: z.array(ElementRow),
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
