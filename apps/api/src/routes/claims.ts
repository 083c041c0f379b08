import { Routes } from '@cubicle/contract/api';
import {
  claimOrFork,
  claimWithProfile,
  extendClaim,
  getClaim,
  heartbeatClaim,
  listClaims,
  releaseClaim,
} from '@cubicle/control-plane';
import { route } from '../lib/define-handler.js';
import { tenantOf } from '../lib/tenant-of.js';
import { Plugin } from '../plugins/plugin-names.js';
import { routeGroup } from '../plugins/route-group.js';
import { registerSnapshotRoutes } from './snapshots.js';
import { registerProfileRoutes } from './profiles.js';

/**
 * Claim routes: claim (idempotent with Idempotency-Key; with `secrets`, sealed with the resources' keyring;
 * with `from_snapshot`, forks), read, heartbeat, extend, release; and the claims' snapshots.
 */
export const claimRoutes = routeGroup(Plugin.claimRoutes, (app) => {
  const deps = app.resources;
  route(app, Routes.createClaim, async ({ request, params, body, headers, auth }) => {
    const key = headers['idempotency-key'];
    const idempotency = key ? { key, scope: `POST /v1/pools/${params.name}/claims` } : undefined;
    // With `profile`, the claim's desktop gets the profile restored before the answer.
    if (body.profile !== undefined)
      return claimWithProfile(
        deps,
        tenantOf(request),
        params.name,
        { ...body, profile: body.profile },
        idempotency,
        auth.role,
      );
    // Without `from_snapshot` this is createClaimWithSecrets as it always was; with it, forks.
    const answer = await claimOrFork(
      deps,
      tenantOf(request),
      params.name,
      body,
      idempotency,
      auth.role,
    );
    // The claim's first drive call then needs no lookup of its sandbox (GuestCalls).
    if ('id' in answer.body) app.guestCalls?.rememberClaim(tenantOf(request), answer.body);
    return answer;
  });

  route(app, Routes.listClaims, async ({ request, query }) => ({
    status: 200,
    body: await listClaims(deps, tenantOf(request), query),
  }));

  route(app, Routes.getClaim, async ({ request, params }) => ({
    status: 200,
    body: await getClaim(deps, tenantOf(request), params.id),
  }));

  route(app, Routes.heartbeatClaim, async ({ request, params }) => ({
    status: 200,
    body: await heartbeatClaim(deps, tenantOf(request), params.id),
  }));

  route(app, Routes.updateClaim, async ({ request, params, body }) => ({
    status: 200,
    body: await extendClaim(deps, tenantOf(request), params.id, body.ttl_seconds),
  }));

  route(app, Routes.releaseClaim, async ({ request, params }) => ({
    status: 200,
    body: await releaseClaim(deps, tenantOf(request), params.id),
  }));

  registerSnapshotRoutes(app, deps);
  registerProfileRoutes(app, deps);
});
