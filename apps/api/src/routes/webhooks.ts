import { Routes } from '@cubicle/contract/api';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhookDeliveries,
  listWebhooks,
  retryWebhookDelivery,
  rotateWebhookSecret,
  updateWebhook,
} from '@cubicle/control-plane';
import { route } from '../lib/define-handler.js';
import { tenantOf } from '../lib/tenant-of.js';
import { Plugin } from '../plugins/plugin-names.js';
import { routeGroup } from '../plugins/route-group.js';

/** Webhook endpoint routes (admin keys): the signing secret is in create/rotate answers only. */
export const webhookRoutes = routeGroup(Plugin.webhookRoutes, (app) => {
  const deps = app.resources;
  route(app, Routes.createWebhook, async ({ request, body, reply }) => {
    // The body holds the only copy of the secret: no cache may keep it.
    reply.header('cache-control', 'no-store');
    return { status: 201, body: await createWebhook(deps, tenantOf(request), body) };
  });

  route(app, Routes.listWebhooks, async ({ request, query }) => ({
    status: 200,
    body: await listWebhooks(deps, tenantOf(request), query),
  }));

  route(app, Routes.getWebhook, async ({ request, params }) => ({
    status: 200,
    body: await getWebhook(deps, tenantOf(request), params.id),
  }));

  route(app, Routes.updateWebhook, async ({ request, params, body }) => ({
    status: 200,
    body: await updateWebhook(deps, tenantOf(request), params.id, body),
  }));

  route(app, Routes.deleteWebhook, async ({ request, params }) => {
    await deleteWebhook(deps, tenantOf(request), params.id);
    return { status: 204, body: null };
  });

  route(app, Routes.rotateWebhookSecret, async ({ request, params, reply }) => {
    reply.header('cache-control', 'no-store');
    return { status: 200, body: await rotateWebhookSecret(deps, tenantOf(request), params.id) };
  });

  route(app, Routes.listWebhookDeliveries, async ({ request, params, query }) => ({
    status: 200,
    body: await listWebhookDeliveries(deps, tenantOf(request), params.id, query),
  }));

  route(app, Routes.retryWebhookDelivery, async ({ request, params }) => ({
    status: 202,
    body: await retryWebhookDelivery(deps, tenantOf(request), params.id, params.delivery_id),
  }));
});
