import type { GuestDeps } from './deps.js';
import { Recorder } from '../recording/recorder.js';
import { secretFilesOf } from '../secrets/routes.js';
import { X11Display } from '../windows/x11/x11-display.js';
import { ScreenshotRegistry } from '../screen/screenshot-registry.js';

/**
 * DesktopIo is the state the screen, windows, input and recording routes share for one app:
 * the X connection, the latest screenshot of each window (pixel input and observe screenshots
 * must agree on it) and the trajectory recorder (element actions record into it too). It sits
 * here beside GuestDeps, above the capability folders: it holds a screen registry and a recorder,
 * so neither screen/ nor recording/ could own it without the other importing back.
 */
export interface DesktopIo {
  x11: X11Display;
  screenshots: ScreenshotRegistry;
  recorder: Recorder;
  childEnv: Record<string, string | undefined>;
}

const byDeps = new WeakMap<GuestDeps, DesktopIo>();

/**
 * desktopIo returns the one DesktopIo of these deps, creating it on first use, so capability
 * folders registered separately (a11y observe with screenshots, element actions that record)
 * share it without widening GuestDeps. Whoever registers routes first closes it with the app.
 */
export function desktopIo(deps: GuestDeps): DesktopIo {
  let io = byDeps.get(deps);
  if (!io) {
    io = {
      x11: new X11Display(deps.display, deps.childEnv.XAUTHORITY),
      screenshots: new ScreenshotRegistry(),
      // Recordings are redacted by the values of the claim's secrets (see Recorder).
      recorder: new Recorder(secretFilesOf(deps)),
      childEnv: deps.childEnv,
    };
    byDeps.set(deps, io);
  }
  return io;
}

/** closeDesktopIo releases the connection and the recording's temp files. */
export async function closeDesktopIo(deps: GuestDeps): Promise<void> {
  const io = byDeps.get(deps);
  if (!io) return;
  byDeps.delete(deps);
  await io.x11.close();
  await io.recorder.dispose();
}
