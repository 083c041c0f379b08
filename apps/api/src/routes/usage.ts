import { Routes } from '@cubicle/contract/api';
import {
  getClaimScreenshot,
  getUsage,
  listViewerConnections,
  poolInsights,
} from '@cubicle/control-plane';
import { route } from '../lib/define-handler.js';
import { tenantOf } from '../lib/tenant-of.js';
import { Plugin } from '../plugins/plugin-names.js';
import { routeGroup } from '../plugins/route-group.js';

/**
 * Usage metering (admin keys), a pool's insights, and a claim's history beyond its actions
 * (viewer connections, kept screenshots) for the dashboard's timeline.
 */
export const usageRoutes = routeGroup(Plugin.usageRoutes, (app) => {
  const deps = app.resources;
  route(app, Routes.getUsage, async ({ request, query }) => ({
    status: 200,
    body: await getUsage(deps, tenantOf(request), query),
  }));

  route(app, Routes.getPoolInsights, async ({ request, params, query }) => ({
    status: 200,
    body: await poolInsights(deps, tenantOf(request), params.name, query),
  }));

  route(app, Routes.listClaimViewerConnections, async ({ request, params, query }) => ({
    status: 200,
    body: await listViewerConnections(deps.db, tenantOf(request), params.id, query),
  }));

  route(app, Routes.getClaimActionScreenshot, async ({ request, params, reply }) => {
    // A screenshot may show anything the desktop showed: no shared cache may keep it.
    reply.header('cache-control', 'private, max-age=3600');
    return {
      status: 200,
      body: await getClaimScreenshot(deps.db, tenantOf(request), params.id, params.screenshot_id),
    };
  });
});
