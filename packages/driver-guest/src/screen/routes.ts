import { GuestRoutes } from '@cubicle/contract/guest';
import type { FastifyInstance } from 'fastify';
import type { GuestDeps } from '../server/deps.js';
import { guestRoute } from '../server/guest-route.js';
import { captureScreenshot } from './capture-screenshot.js';
import { closeDesktopIo, desktopIo } from '../server/desktop-io.js';

/** registerScreenRoutes mounts screenshot. */
export function registerScreenRoutes(app: FastifyInstance, deps: GuestDeps) {
  const io = desktopIo(deps);
  app.addHook('onClose', async () => closeDesktopIo(deps));
  guestRoute(app, GuestRoutes.screenshot, (body) => captureScreenshot(io, body));
}
