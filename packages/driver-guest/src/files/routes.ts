import { GuestRoutes } from '@cubicle/contract/guest';
import type { FastifyInstance } from 'fastify';
import type { GuestDeps } from '../server/deps.js';
import { guestRoute } from '../server/guest-route.js';
import { deletePath, listDirectory, readFileRange, statPath, writeFileAtomic } from './file-ops.js';

/** registerFilesRoutes mounts files.read, write, list, stat and delete. */
export function registerFilesRoutes(app: FastifyInstance, deps: GuestDeps) {
  guestRoute(app, GuestRoutes['files.read'], (body) => readFileRange(body, deps.maxFileBytes));
  guestRoute(app, GuestRoutes['files.write'], (body) => writeFileAtomic(body, deps.maxFileBytes));
  guestRoute(app, GuestRoutes['files.list'], (body) => listDirectory(body));
  guestRoute(app, GuestRoutes['files.stat'], (body) => statPath(body.path));
  guestRoute(app, GuestRoutes['files.delete'], (body) => deletePath(body));
}
