import { GuestRoutes } from '@cubicle/contract/guest';
import type { FastifyInstance } from 'fastify';
import type { GuestDeps } from '../server/deps.js';
import { guestRoute } from '../server/guest-route.js';
import { resolveSecretsDir, SecretFiles } from './secret-files.js';

const byDeps = new WeakMap<GuestDeps, SecretFiles>();

/**
 * secretFilesOf returns the one SecretFiles of these deps, so the routes that write secrets and
 * the recorder that redacts them share what was written, whichever is registered first. Every
 * process the guest starts (shell runs, launched apps) finds the directory in
 * CUBICLE_SECRETS_DIR.
 */
export function secretFilesOf(deps: GuestDeps): SecretFiles {
  let files = byDeps.get(deps);
  if (!files) {
    const dir = resolveSecretsDir(deps.childEnv, deps.display);
    deps.childEnv.CUBICLE_SECRETS_DIR = dir;
    files = new SecretFiles(dir);
    byDeps.set(deps, files);
  }
  return files;
}

/**
 * registerSecretsRoutes mounts secrets.write and secrets.delete (the worker delivers a claim's
 * secrets through them).
 */
export function registerSecretsRoutes(app: FastifyInstance, deps: GuestDeps) {
  const files = secretFilesOf(deps);
  guestRoute(app, GuestRoutes['secrets.write'], (body) => files.write(body));
  guestRoute(app, GuestRoutes['secrets.delete'], (body) => files.delete(body));
}
