import { z } from 'zod';
import { WindowId, Pid } from '../guest/common.js';
import { ElementRole } from '../guest/element.js';
import { LaunchApp } from '../guest/windows.js';
import { named } from '../registry.js';
import { text } from '../text.js';

/** PRIME_MAX_APPS bounds a pool's prime list: each app is a process every warm desktop keeps. */
export const PRIME_MAX_APPS = 8;

/**
 * PrimeWait is what "ready" means for one primed app, checked after its window appeared:
 * - `window_title`: the window's title contains `contains` (a page's `<title>` once it loaded);
 * - `element`: an element with this accessible `name` (and `role`, when given) shows in the
 *   window (a page's or a dialog's control is there to act on);
 * - `delay`: wait `ms` after the window appeared (an app with nothing better to watch).
 */
export const PrimeWait = named(
  'PrimeWait',
  z.discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('window_title'), contains: text().min(1).max(512) }),
    z.strictObject({
      kind: z.literal('element'),
      name: text().min(1).max(512),
      role: ElementRole.optional(),
    }),
    z.strictObject({ kind: z.literal('delay'), ms: z.number().int().min(1).max(60_000) }),
  ]),
);
export type PrimeWait = z.infer<typeof PrimeWait>;

/**
 * PrimeApp is one app a warm desktop has open before it is handed out: the guest's LaunchApp
 * names (`browser`, `office.writer`, `terminal`, …), with `url` for a browser app's page.
 */
export const PrimeApp = named(
  'PrimeApp',
  z
    .strictObject({
      app: LaunchApp,
      url: z
        .url({ protocol: /^(https?|file)$/ })
        .max(8192)
        .optional(),
      wait_for: PrimeWait.optional(),
    })
    .refine((a) => a.url === undefined || a.app.startsWith('browser'), {
      message: 'url opens a page in a browser app (app "browser" or "browser.firefox")',
      path: ['url'],
    })
    .meta({
      description: '`url` only with a browser app.',
      dependentSchemas: { url: { properties: { app: { pattern: '^browser' } } } },
    }),
);
export type PrimeApp = z.infer<typeof PrimeApp>;

/**
 * PoolPrime is what every warm desktop of the pool has open before a claim takes it: the apps
 * are launched in order once the desktop is up, and a desktop counts as warm only when all are
 * open (and their `wait_for` held) within `timeout_seconds`; otherwise it fails with the reason
 * and is replaced. A primed app that exits while the desktop waits for a claim gets the desktop
 * replaced. Changing `prime` rolls warm desktops, as any template change does.
 *
 * `restore` is reserved for restoring a saved profile or snapshot before the apps launch
 * ("Desktops that remember", issue 34): not available yet, so only null is accepted.
 */
export const PoolPrime = named(
  'PoolPrime',
  z
    .strictObject({
      apps: z.array(PrimeApp).min(1).max(PRIME_MAX_APPS),
      /**
       * The whole priming, every app and wait included. At most 240 s: the desktop's start and
       * its priming share one provisioning job (5 minutes).
       */
      timeout_seconds: z.number().int().min(1).max(240).default(60),
      restore: z
        .null()
        .default(null)
        .describe('Reserved: a profile or snapshot to restore first (not available yet).'),
    })
    // Single-instance apps (Chromium, LibreOffice) hand a second launch to the running process:
    // it would open no window of its own, and the desktop would never count as primed.
    .refine((p) => new Set(p.apps.map((a) => a.app)).size === p.apps.length, {
      message: 'each app at most once (a second launch of a single-instance app opens no window)',
      path: ['apps'],
    })
    .meta({ description: 'Each app at most once.' }),
);
export type PoolPrime = z.infer<typeof PoolPrime>;
export type PoolPrimeInput = z.input<typeof PoolPrime>;

/**
 * PrimedWindow is a window a primed app opened, as the claim answer lists it: pass `window_id`
 * to observe or act at once, without listing windows first. `pid` is the app's process as the
 * desktop sees it.
 */
export const PrimedWindow = named(
  'PrimedWindow',
  z.strictObject({
    app: LaunchApp,
    window_id: WindowId,
    title: z.string().max(4096),
    pid: Pid,
  }),
);
export type PrimedWindow = z.infer<typeof PrimedWindow>;
