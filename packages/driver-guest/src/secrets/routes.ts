import { GuestRoutes } from '@cubicle/contract/guest';
import type { FastifyInstance } from 'fastify';
import type { GuestDeps } from '../server/deps.js';
import { guestRoute } from '../server/guest-route.js';
import { resolveSecretsDir, SecretFiles } from './secret-files.js';

/**
 * registerSecretsRoutes mounts secrets.write and secrets.delete (the worker delivers a claim's
 * secrets through them). Every process the guest starts afterwards (shell runs, launched apps)
 * finds the directory in CUBICLE_SECRETS_DIR.
 */
export function registerSecretsRoutes(app: FastifyInstance, deps: GuestDeps) {
  const dir = resolveSecretsDir(deps.childEnv, deps.display);
  deps.childEnv.CUBICLE_SECRETS_DIR = dir;
  const files = new SecretFiles(dir);
  guestRoute(app, GuestRoutes['secrets.write'], (body) => files.write(body));
  guestRoute(app, GuestRoutes['secrets.delete'], (body) => files.delete(body));
}
