import { Routes } from '@cubicle/contract/api';
import { applyPool, deletePool, getPool, listPools } from '@cubicle/control-plane';
import { route } from '../lib/define-handler.js';
import { tenantOf } from '../lib/tenant-of.js';
import { Plugin } from '../plugins/plugin-names.js';
import { routeGroup } from '../plugins/route-group.js';

/** Pool routes: declarative apply (PUT), read with live counts, drain (DELETE). */
export const poolRoutes = routeGroup(Plugin.poolRoutes, (app) => {
  const deps = app.resources;
  route(app, Routes.listPools, async ({ request, query }) => ({
    status: 200,
    body: await listPools(deps, tenantOf(request), query),
  }));

  route(app, Routes.getPool, async ({ request, params }) => ({
    status: 200,
    body: await getPool(deps, tenantOf(request), params.name),
  }));

  route(app, Routes.applyPool, async ({ request, params, body }) => {
    const { pool, created } = await applyPool(deps, tenantOf(request), params.name, body);
    return created ? { status: 201, body: pool } : { status: 200, body: pool };
  });

  route(app, Routes.deletePool, async ({ request, params }) => ({
    status: 202,
    body: await deletePool(deps, tenantOf(request), params.name),
  }));
});
