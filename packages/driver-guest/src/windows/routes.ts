import { GuestRoutes } from '@cubicle/contract/guest';
import type { FastifyInstance } from 'fastify';
import { recordAction } from '../recording/record-action.js';
import { closeDesktopIo, desktopIo } from '../server/desktop-io.js';
import type { GuestDeps } from '../server/deps.js';
import { guestRoute } from '../server/guest-route.js';
import { closeWindow } from './close-window.js';
import { launchApp } from './launch-app.js';
import { listWindows, toWindowInfo } from './list-windows.js';

/** registerWindowsRoutes mounts windows.list, windows.launch and windows.close. */
export function registerWindowsRoutes(app: FastifyInstance, deps: GuestDeps) {
  const io = desktopIo(deps);
  app.addHook('onClose', async () => closeDesktopIo(deps));
  guestRoute(app, GuestRoutes['windows.list'], async () => ({
    windows: (await listWindows(io.x11)).map(toWindowInfo),
  }));
  guestRoute(app, GuestRoutes['windows.launch'], (body) => launchApp(io.x11, deps.childEnv, body));
  guestRoute(app, GuestRoutes['windows.close'], async (body) => {
    const result = await recordAction(
      io,
      { window_id: body.window_id, action: { kind: 'window_close', request: body } },
      () => closeWindow(io.x11, body),
    );
    // XIDs are reused: a closed window's screenshot must not anchor input to a new window.
    if (result.effect === 'confirmed') io.screenshots.forget(body.window_id);
    return result;
  });
}
