import { GuestRoutes } from '@cubicle/contract/guest';
import type { FastifyInstance } from 'fastify';
import { recordAction } from '../recording/record-action.js';
import { closeDesktopIo, desktopIo } from '../server/desktop-io.js';
import type { GuestDeps } from '../server/deps.js';
import { guestRoute } from '../server/guest-route.js';
import { performPixelAction } from './perform-pixel-action.js';

/** registerInputRoutes mounts act.pixel. */
export function registerInputRoutes(app: FastifyInstance, deps: GuestDeps) {
  const io = desktopIo(deps);
  app.addHook('onClose', async () => closeDesktopIo(deps));
  guestRoute(app, GuestRoutes['act.pixel'], (body) => {
    // A trajectory is kept per window; input measured on the whole display is not recorded.
    if (body.window_id === undefined) return performPixelAction(io, body);
    return recordAction(
      io,
      {
        window_id: body.window_id,
        action: { kind: 'pixel', request: body },
        // Pixel input cannot tell whether the focused field is a password field, so typed text
        // is never stored: a recording that loses some text is better than one that leaks.
        redact: body.action === 'type' ? ['text'] : [],
      },
      () => performPixelAction(io, body),
    );
  });
}
