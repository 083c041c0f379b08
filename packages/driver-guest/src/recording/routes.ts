import { GuestRoutes } from '@cubicle/contract/guest';
import type { FastifyInstance } from 'fastify';
import { closeDesktopIo, desktopIo } from '../server/desktop-io.js';
import type { GuestDeps } from '../server/deps.js';
import { guestRoute } from '../server/guest-route.js';

/** registerRecordingRoutes mounts recording.start, recording.stop and recording.archive. */
export function registerRecordingRoutes(app: FastifyInstance, deps: GuestDeps) {
  const io = desktopIo(deps);
  app.addHook('onClose', async () => closeDesktopIo(deps));
  guestRoute(app, GuestRoutes['recording.start'], (body) => io.recorder.start(body));
  guestRoute(app, GuestRoutes['recording.stop'], () => io.recorder.stop());
  guestRoute(app, GuestRoutes['recording.archive'], async (_body, { reply }) => {
    const archive = await io.recorder.archive();
    return reply
      .header('content-type', 'application/gzip')
      .header('content-disposition', 'attachment; filename="recording.tar.gz"')
      .send(archive);
  });
}
