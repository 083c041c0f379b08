import { Routes } from '@cubicle/contract/api';
import {
  addClaimSecret,
  deleteClaimSecret,
  deleteStoredSecret,
  listClaimSecrets,
  listStoredSecrets,
  putStoredSecret,
} from '@cubicle/control-plane';
import { route } from '../lib/define-handler.js';
import { tenantOf } from '../lib/tenant-of.js';
import { Plugin } from '../plugins/plugin-names.js';
import { routeGroup } from '../plugins/route-group.js';

/**
 * Secret routes: per-claim secrets and the tenant's stored secrets. Write-only: answers carry
 * names, ids and versions, never a value (and are not cached).
 */
export const secretRoutes = routeGroup(Plugin.secretRoutes, (app) => {
  const deps = app.resources;
  route(app, Routes.createSecret, async ({ request, params, body, reply }) => {
    reply.header('cache-control', 'no-store');
    return {
      status: 201,
      body: await addClaimSecret(deps, tenantOf(request), params.id, body),
    };
  });

  route(app, Routes.listSecrets, async ({ request, params }) => ({
    status: 200,
    body: await listClaimSecrets(deps, tenantOf(request), params.id),
  }));

  route(app, Routes.deleteSecret, async ({ request, params }) => {
    await deleteClaimSecret(deps, tenantOf(request), params.id, params.secret_id);
    return { status: 204, body: null };
  });

  route(app, Routes.listStoredSecrets, async ({ request }) => ({
    status: 200,
    body: await listStoredSecrets(deps, tenantOf(request)),
  }));

  route(app, Routes.createStoredSecret, async ({ request, body, reply }) => {
    reply.header('cache-control', 'no-store');
    return {
      status: 201,
      body: await putStoredSecret(
        deps,
        tenantOf(request),
        body.name,
        body.value,
        body.usable_by,
        body.inject,
      ),
    };
  });

  route(app, Routes.putStoredSecret, async ({ request, params, body, reply }) => {
    reply.header('cache-control', 'no-store');
    return {
      status: 201,
      body: await putStoredSecret(
        deps,
        tenantOf(request),
        params.name,
        body.value,
        body.usable_by,
        body.inject,
      ),
    };
  });

  route(app, Routes.deleteStoredSecret, async ({ request, params }) => {
    await deleteStoredSecret(deps, tenantOf(request), params.name);
    return { status: 204, body: null };
  });
});
