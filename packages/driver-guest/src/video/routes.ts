import { GuestRoutes } from '@cubicle/contract/guest';
import type { FastifyInstance } from 'fastify';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GuestDeps } from '../server/deps.js';
import { guestRoute } from '../server/guest-route.js';
import { VideoEncoder } from './video-encoder.js';

/** The encoder's files: per display, so two desktops sharing a /tmp (tests) never mix. */
const videoRoot = (display: string) =>
  join(tmpdir(), `cubicle-video-${display.replace(/[^A-Za-z0-9]/g, '_')}`);

/** registerVideoRoutes mounts the screen video: video.start, status, segment, ack and stop. */
export function registerVideoRoutes(app: FastifyInstance, deps: GuestDeps) {
  const encoder = new VideoEncoder(deps.display, videoRoot(deps.display), deps.childEnv);
  app.addHook('onClose', async () => encoder.dispose());
  guestRoute(app, GuestRoutes['video.start'], (body) => encoder.start(body));
  guestRoute(app, GuestRoutes['video.status'], () => encoder.status());
  guestRoute(app, GuestRoutes['video.segment'], (body) => encoder.segment(body.id));
  guestRoute(app, GuestRoutes['video.ack'], (body) => encoder.ack(body.ids));
  guestRoute(app, GuestRoutes['video.stop'], () => encoder.stop());
}
