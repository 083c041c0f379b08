import { z } from 'zod';
import { named } from '../registry.js';
import { AbsolutePath, Argv, DurationMs, EnvVars, Pid, Rect, WindowId } from './common.js';

export const LAUNCH_DEFAULT_WAIT_MS = 10_000;
export const LAUNCH_MAX_WAIT_MS = 120_000;

/**
 * WindowInfo is one top-level window as EWMH reports it (`_NET_CLIENT_LIST_STACKING`,
 * `_NET_WM_NAME`, `_NET_WM_PID`, `WM_CLASS`). `pid` and `app` are null when the client does not
 * set them, which is "unknown", not "none".
 */
export const WindowInfo = named(
  'GuestWindowInfo',
  z.strictObject({
    window_id: WindowId,
    title: z.string().max(4096),
    pid: Pid.nullable(),
    /** The WM_CLASS class name, e.g. `Gnome-calculator`. */
    app: z.string().max(256).nullable(),
    /** Outer frame in screen coordinates. */
    geometry: Rect,
    /** Stacking position, 0 at the bottom: larger is in front. */
    z_order: z.int().min(0),
    focused: z.boolean(),
    minimized: z.boolean(),
  }),
);
export type WindowInfo = z.infer<typeof WindowInfo>;

/** WindowListResponse lists top-level windows front to back. */
export const WindowListResponse = named(
  'GuestWindowListResponse',
  z.strictObject({ windows: z.array(WindowInfo) }),
);
export type WindowListResponse = z.infer<typeof WindowListResponse>;

/**
 * LaunchApp names the desktop's apps by what they are for, so a caller need not know the binary
 * or the flags that turn its accessibility on: `browser` (Chromium), `browser.firefox`,
 * `office.writer`, `office.calc` (LibreOffice), `terminal`, `files` (file manager), `editor`.
 */
export const LaunchApp = named(
  'GuestLaunchApp',
  z.enum([
    'browser',
    'browser.firefox',
    'office.writer',
    'office.calc',
    'terminal',
    'files',
    'editor',
  ]),
);
export type LaunchApp = z.infer<typeof LaunchApp>;

/**
 * WindowLaunchRequest starts an app detached from the driver (its own session and process group,
 * on the desktop's display and buses) and waits up to `wait_for_window_ms` for a new top-level
 * window whose `_NET_WM_PID` is the app's or one of its descendants'. 0 does not wait. Give
 * either `argv` (any program) or `app` (a LaunchApp, started with accessibility on and the
 * sandbox's browser policy); `url` opens a page in a browser app.
 */
const launchOptions = {
  cwd: AbsolutePath.optional(),
  env: EnvVars.optional(),
  wait_for_window_ms: z.int().min(0).max(LAUNCH_MAX_WAIT_MS).default(LAUNCH_DEFAULT_WAIT_MS),
};

export const WindowLaunchRequest = named(
  'GuestWindowLaunchRequest',
  z.union([
    z.strictObject({ argv: Argv, ...launchOptions }),
    z
      .strictObject({
        app: LaunchApp,
        url: z
          .url({ protocol: /^(https?|file)$/ })
          .max(8192)
          .optional(),
        ...launchOptions,
      })
      .refine((r) => r.url === undefined || r.app.startsWith('browser'), {
        message: 'url opens a page in a browser app (app "browser" or "browser.firefox")',
        path: ['url'],
      })
      .meta({
        description: '`url` only with a browser app.',
        dependentSchemas: { url: { properties: { app: { pattern: '^browser' } } } },
      }),
  ]),
);
export type WindowLaunchRequest = z.infer<typeof WindowLaunchRequest>;

const launched = { pid: Pid, duration_ms: DurationMs };

/**
 * WindowLaunchResponse: `window` exists exactly when one was found. `timed_out` does not mean the
 * launch failed (single-instance apps hand off to a running process and exit); list the windows.
 * `exited` means the process ended before any window appeared.
 */
export const WindowLaunchResponse = named(
  'GuestWindowLaunchResponse',
  z.discriminatedUnion('window_wait', [
    z.strictObject({ ...launched, window_wait: z.literal('found'), window: WindowInfo }),
    z.strictObject({ ...launched, window_wait: z.literal('timed_out') }),
    z.strictObject({ ...launched, window_wait: z.literal('skipped') }),
    z.strictObject({
      ...launched,
      window_wait: z.literal('exited'),
      exit_code: z.int().nullable(),
      signal: z.string().max(16).nullable(),
    }),
  ]),
);
export type WindowLaunchResponse = z.infer<typeof WindowLaunchResponse>;

/**
 * WindowCloseRequest asks the window to close (`_NET_CLOSE_WINDOW`, as its close button would)
 * and waits up to `timeout_ms`. With `force`, a window still open then has its process group
 * sent SIGTERM. The answer is an ActionResult: an app may ask "save changes?" instead of closing,
 * which is `suspected_noop`, not success.
 */
export const WindowCloseRequest = named(
  'GuestWindowCloseRequest',
  z.strictObject({
    window_id: WindowId,
    timeout_ms: z.int().min(0).max(60_000).default(5_000),
    force: z.boolean().default(false),
  }),
);
export type WindowCloseRequest = z.infer<typeof WindowCloseRequest>;
