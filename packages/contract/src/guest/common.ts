import { z } from 'zod';
import { named } from '../registry.js';
import { text } from '../text.js';

/**
 * GUEST_PROTOCOL_VERSION is the path prefix of every guest endpoint but `/healthz`. A breaking
 * change to any schema in this folder ships as `/v2` next to `/v1`, never in place, because
 * sandboxes built from an older image keep running while the control plane is upgraded.
 */
export const GUEST_PROTOCOL_VERSION = 'v1' as const;

/** GUEST_DEFAULT_PORT is where the driver listens unless its env says otherwise. */
export const GUEST_DEFAULT_PORT = 3211;

/**
 * GUEST_MAX_BODY_BYTES bounds every JSON request body. It is sized for the largest file write
 * (base64 grows content by 4/3) plus envelope; anything bigger is answered 413.
 */
export const GUEST_MAX_BODY_BYTES = 12 * 1024 * 1024;

/**
 * WindowId is the X11 window id (XID) of a top-level client window as EWMH lists it. XIDs are
 * 29-bit in practice, 32-bit by the protocol; a JSON number holds either exactly.
 */
export const WindowId = named('GuestWindowId', z.int().min(1).max(0xffffffff));
export type WindowId = z.infer<typeof WindowId>;

export const Pid = named('GuestPid', z.int().min(1));
export type Pid = z.infer<typeof Pid>;

/**
 * Rect is a rectangle in integer units. Screen rectangles (`frame`, window geometry) may start
 * at negative x/y: windows can hang off the left or top edge of the X screen.
 */
export const Rect = named(
  'GuestRect',
  z.strictObject({ x: z.int(), y: z.int(), w: z.int().min(0), h: z.int().min(0) }),
);
export type Rect = z.infer<typeof Rect>;

/** Point is a screen position in X11 root-window coordinates. */
export const Point = named('GuestPoint', z.strictObject({ x: z.int(), y: z.int() }));
export type Point = z.infer<typeof Point>;

/**
 * DeliveryMode says how input may reach the app. `background` uses AT-SPI (or events sent to
 * the window) and must not move the pointer, raise or focus anything, so a person watching over
 * VNC is not disturbed; `foreground` may activate the window and use XTest. A request that names
 * a mode gets that mode or a refusal: failing in the background is never taken as permission.
 * An element action that names none lets the driver choose before delivering (see
 * ElementActionRequest); the result's `delivery` says which mode was used.
 */
export const DeliveryMode = named('GuestDeliveryMode', z.enum(['background', 'foreground']));
export type DeliveryMode = z.infer<typeof DeliveryMode>;

/** DurationMs is wall-clock time measured by the driver, in milliseconds (fractions allowed). */
export const DurationMs = z.number().min(0);

/** Timestamp is RFC 3339 UTC with milliseconds, as `Date#toISOString` prints it. */
export const Timestamp = z.iso.datetime({ offset: false, precision: 3 });

/**
 * AbsolutePath is a path inside the guest. Relative paths are rejected rather than resolved
 * against the driver's cwd, which callers cannot see; NUL is rejected because no syscall takes it.
 */
export const AbsolutePath = named(
  'GuestAbsolutePath',
  z
    .string()
    .min(1)
    .max(4096)
    .regex(/^\/[^\0]*$/, 'must be an absolute path without NUL bytes'),
);
export type AbsolutePath = z.infer<typeof AbsolutePath>;

/** EnvVars are extra environment variables for a spawned process, merged over the driver's. */
export const EnvVars = named(
  'GuestEnvVars',
  z.record(
    z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'environment variable names are [A-Za-z_][A-Za-z0-9_]*'),
    text().max(32_768),
  ),
);
export type EnvVars = z.infer<typeof EnvVars>;

/** Argv is a program and its arguments, executed without a shell (no quoting pitfalls). */
export const Argv = named('GuestArgv', z.array(text().min(1).max(32_768)).min(1).max(1024));
export type Argv = z.infer<typeof Argv>;
