import { Routes } from '@cubicle/contract/api';
import { getTenant, updateTenant } from '@cubicle/tenancy';
import { route } from '../lib/define-handler.js';
import { Plugin } from '../plugins/plugin-names.js';
import { routeGroup } from '../plugins/route-group.js';

/** The caller's tenant: any key reads it; admin keys set the embedding origins and retention. */
export const tenantRoutes = routeGroup(Plugin.tenantRoutes, (app) => {
  const { db } = app.connections;
  route(app, Routes.getTenant, async ({ auth }) => ({
    status: 200,
    body: await getTenant(db, auth.tenantId),
  }));

  route(app, Routes.updateTenant, async ({ auth, body }) => ({
    status: 200,
    body: await updateTenant(db, auth.tenantId, body),
  }));
});
