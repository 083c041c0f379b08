import { Routes, toFastifyPath, type EgressEvent } from '@cubicle/contract/api';
import {
  EgressEventFeed,
  getClaimEgress,
  hasClaimEnded,
  listEgressEvents,
} from '@cubicle/control-plane';
import { parsePart, route } from '../lib/define-handler.js';
import { tenantOf } from '../lib/tenant-of.js';
import { Plugin } from '../plugins/plugin-names.js';
import { routeGroup } from '../plugins/route-group.js';
import { openEventStream, sseFrame } from '../streams/event-stream.js';

/** How often an open egress stream looks whether its claim has ended. */
const CLAIM_CHECK_MS = 5_000;

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
      const tenantId = tenantOf(request);
      const hasEnded = await hasClaimEnded(deps, tenantId, params.id);
      const stream = openEventStream(request, reply, closing.signal);
      const send = (event: EgressEvent) =>
        void stream.write(sseFrame(event.id, 'egress.denied', event));
      const stop = hasEnded ? () => undefined : await feedOf().follow(params.id, send);
      // The stream ends with the claim (checked every few seconds) or when the reader leaves.
      let ended = hasEnded;
      while (!ended && !stream.signal.aborted) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, CLAIM_CHECK_MS);
          stream.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), {
            once: true,
          });
        });
        if (!stream.signal.aborted)
          ended = await hasClaimEnded(deps, tenantId, params.id).catch(() => true);
      }
      stop();
      if (ended) await stream.write('event: end\ndata: {}\n\n');
      stream.end();
    },
  });
});
