import { Routes } from '@cubicle/contract/api';
import {
  deleteProfile,
  getProfile,
  listProfiles,
  saveClaimProfile,
  type ProfileDeps,
} from '@cubicle/control-plane';
import type { FastifyInstance } from 'fastify';
import { route } from '../lib/define-handler.js';
import { tenantOf } from '../lib/tenant-of.js';

/**
 * registerProfileRoutes mounts a claim's profile save and the profiles' list, get and delete.
 * Registered by the claim routes: a profile is taken with a claim (`profile` in its request).
 */
export function registerProfileRoutes(app: FastifyInstance, deps: ProfileDeps) {
  route(app, Routes.saveClaimProfile, async ({ request, params }) => ({
    status: 200,
    body: await saveClaimProfile(deps, tenantOf(request), params.id),
  }));

  route(app, Routes.listProfiles, async ({ request, query }) => ({
    status: 200,
    body: await listProfiles(deps, tenantOf(request), query),
  }));

  route(app, Routes.getProfile, async ({ request, params }) => ({
    status: 200,
    body: await getProfile(deps, tenantOf(request), params.id),
  }));

  route(app, Routes.deleteProfile, async ({ request, params }) => {
    await deleteProfile(deps, tenantOf(request), params.id);
    return { status: 204, body: null };
  });
}
