import { Routes } from '@cubicle/contract/api';
import { getTenant, setEmbedOrigins } from '@cubicle/tenancy';
import { route } from '../lib/define-handler.js';
import { Plugin } from '../plugins/plugin-names.js';
import { routeGroup } from '../plugins/route-group.js';

/** The caller's tenant: any key reads it; admin keys set the viewer's embedding origins. */
export const tenantRoutes = routeGroup(Plugin.tenantRoutes, (app) => {
  const { db } = app.connections;
  route(app, Routes.getTenant, async ({ auth }) => ({
    status: 200,
    body: await getTenant(db, auth.tenantId),
  }));

  route(app, Routes.updateTenant, async ({ auth, body }) => ({
    status: 200,
    body: await setEmbedOrigins(db, auth.tenantId, body.embed_origins),
  }));
});
