import { Routes, toFastifyPath, type EgressEvent } from '@cubicle/contract/api';
import { EgressEventFeed, getClaimEgress, listEgressEvents } from '@cubicle/control-plane';
import { parsePart, route } from '../lib/define-handler.js';
import { tenantOf } from '../lib/tenant-of.js';
import { Plugin } from '../plugins/plugin-names.js';
import { routeGroup } from '../plugins/route-group.js';
import { openEventStream, sseFrame } from '../streams/event-stream.js';

/**
 * Egress routes: a claim's effective policy with its destinations, its `egress.denied` event
 * page, and the same events live as Server-Sent Events (one Redis subscription per process,
 * EgressEventFeed, opened on the first stream).
 */
export const egressRoutes = routeGroup(Plugin.egressRoutes, (app) => {
  const deps = app.resources;
  const { redis, prefix } = app.connections;
  let feed: { feed: EgressEventFeed; close: () => void } | null = null;
  const feedOf = () => {
    if (!feed) {
      const subscriber = redis.duplicate();
      feed = {
        feed: new EgressEventFeed(subscriber, prefix),
        close: () => subscriber.disconnect(),
      };
    }
    return feed.feed;
  };
  const closing = new AbortController();
  app.addHook('preClose', async () => closing.abort());
  app.addHook('onClose', async () => feed?.close());

  route(app, Routes.getClaimEgress, async ({ request, params }) => ({
    status: 200,
    body: await getClaimEgress(deps, tenantOf(request), params.id),
  }));

  route(app, Routes.listEgressEvents, async ({ request, params, query }) => ({
    status: 200,
    body: await listEgressEvents(deps, tenantOf(request), params.id, query),
  }));

  app.route({
    method: 'GET',
    url: toFastifyPath(Routes.streamEgressEvents.path),
    config: { routeDef: Routes.streamEgressEvents },
    onRequest: async (request, reply) => {
      await app.cubicleAuthenticate!(request, reply, Routes.streamEgressEvents.auth);
    },
    handler: async (request, reply) => {
      const params = parsePart(Routes.streamEgressEvents.params, request.params, 'path') as {
        id: string;
      };
      // not_found (other tenants' claims too) before the stream opens.
      await listEgressEvents(deps, tenantOf(request), params.id, { limit: 1 });
      const stream = openEventStream(request, reply, closing.signal);
      const send = (event: EgressEvent) =>
        void stream.write(sseFrame(event.id, 'egress.denied', event));
      const stop = await feedOf().follow(params.id, send);
      await new Promise<void>((resolve) => {
        if (stream.signal.aborted) return resolve();
        stream.signal.addEventListener('abort', () => resolve(), { once: true });
      });
      stop();
      stream.end();
    },
  });
});
