import { GuestRoutes } from '@cubicle/contract/guest';
import type { FastifyInstance } from 'fastify';
import type { GuestDeps } from '../server/deps.js';
import { guestRoute } from '../server/guest-route.js';
import { withFsErrors } from '../files/map-fs-error.js';
import { applyManifest, needChunks } from './apply-manifest.js';
import { homeOf } from './home-root.js';
import { readChunks } from './read-chunks.js';
import { scanHome } from './scan-home.js';
import { stageChunks } from './staging.js';

/**
 * registerArchiveRoutes mounts archive.scan, read, need, stage and apply (the guest archive,
 * contract guest/archive.ts): every path is under the desktop user's home (HOME of the driver's
 * children), never followed through a symlink.
 */
export function registerArchiveRoutes(app: FastifyInstance, deps: GuestDeps) {
  const home = () => homeOf(deps.childEnv);
  guestRoute(app, GuestRoutes['archive.scan'], (body) =>
    withFsErrors('the home', () => scanHome(home(), body)),
  );
  guestRoute(app, GuestRoutes['archive.read'], (body) =>
    withFsErrors('the home', () => readChunks(home(), body)),
  );
  guestRoute(app, GuestRoutes['archive.need'], (body) =>
    withFsErrors('the home', () => needChunks(home(), body)),
  );
  guestRoute(app, GuestRoutes['archive.stage'], (body) =>
    withFsErrors('the staging area', () => stageChunks(home(), body)),
  );
  guestRoute(app, GuestRoutes['archive.apply'], (body) =>
    withFsErrors('the home', () => applyManifest(home(), body)),
  );
}
