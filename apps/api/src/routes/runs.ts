import { Routes } from '@cubicle/contract/api';
import {
  cancelRun,
  createRun,
  getRun,
  listClaimRuns,
  listRunEvents,
  listRuns,
  writeRunStdin,
} from '@cubicle/control-plane';
import { route } from '../lib/define-handler.js';
import { tenantOf } from '../lib/tenant-of.js';
import { Plugin } from '../plugins/plugin-names.js';
import { routeGroup } from '../plugins/route-group.js';

/**
 * Run routes: create (202, queued; the worker starts it), get, list, stdin, cancel, and the event
 * log as JSON pages. Input is queued in Redis for the worker holding the run; the live forms of
 * the event log are in run-event-streams.ts.
 */
export const runRoutes = routeGroup(Plugin.runRoutes, (app) => {
  const deps = app.resources;

  route(app, Routes.createRun, async ({ request, params, body, headers, auth }) => ({
    status: 202,
    body: await createRun(
      deps,
      tenantOf(request),
      params.id,
      body,
      headers['idempotency-key'],
      auth.role,
    ),
  }));
  route(app, Routes.listClaimRuns, async ({ request, params, query }) => ({
    status: 200,
    body: await listClaimRuns(deps, tenantOf(request), params.id, query),
  }));
  route(app, Routes.listRuns, async ({ request, query }) => ({
    status: 200,
    body: await listRuns(deps, tenantOf(request), query),
  }));
  route(app, Routes.getRun, async ({ request, params }) => ({
    status: 200,
    body: await getRun(deps, tenantOf(request), params.run_id),
  }));
  route(app, Routes.listRunEvents, async ({ request, params, query }) => ({
    status: 200,
    body: await listRunEvents(deps, tenantOf(request), params.run_id, query),
  }));
  route(app, Routes.writeRunStdin, async ({ request, params, body }) => ({
    status: 202,
    body: await writeRunStdin(deps, tenantOf(request), params.run_id, body),
  }));
  route(app, Routes.cancelRun, async ({ request, params, body }) => ({
    status: 202,
    body: await cancelRun(deps, tenantOf(request), params.run_id, body.grace_seconds),
  }));
});
