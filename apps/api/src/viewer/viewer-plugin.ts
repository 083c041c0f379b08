import {
  createStreamLeases,
  DEFAULT_STREAM_LIMITS,
  listenForRevocations,
  LiveStreams,
  recheckStreams,
  type TicketDeps,
} from '@cubicle/viewer';
import { resumeBeforeViewing } from '@cubicle/control-plane';
import fp from 'fastify-plugin';
import { Plugin } from '../plugins/plugin-names.js';
import { registerHandoffRoutes } from '../routes/handoffs.js';
import { registerViewerTicketRoutes } from '../routes/viewer-tickets.js';
import type { ViewerOptions } from './viewer-options.js';
import { registerViewerStream } from './viewer-stream.js';

const DEFAULT_RECHECK_MS = 5_000;

export interface ViewerPluginOptions {
  options: ViewerOptions;
}

/**
 * viewerPlugin wires viewer tickets and the stream proxy: the ticket routes, the handoff routes
 * (a handoff's answer carries its control ticket), the WebSocket
 * stream, this process's registry of open streams, its Redis subscription to revocations (so a
 * DELETE on any replica, or the worker ending a claim, closes streams here within a second),
 * stream leases in Redis (the viewer limits hold across replicas), and a periodic database
 * re-check in case a pub/sub message was lost. It needs the app's WebSocket server.
 */
export const viewerPlugin = fp<ViewerPluginOptions>(
  async (app, { options }) => {
    const { db, redis } = app.connections;
    // The keyring opens sandboxes' guest tokens: the stream proves it holds one to the VNC port.
    const { events, keyring } = app.resources;
    const deps: TicketDeps = { db, keys: options.keys, events };
    const limits = { ...DEFAULT_STREAM_LIMITS, ...options.limits };
    const streams = new LiveStreams(limits);
    // The limits are cluster-wide (leases in Redis); LiveStreams keeps enforcing them per process
    // too, which is what remains when Redis is unreachable.
    const leases = createStreamLeases(redis, {
      prefix: events.prefix,
      limits,
      ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}),
      onError: (err) => app.log.warn({ err }, 'viewer stream lease: Redis failed'),
    });
    registerViewerTicketRoutes(app, deps, options);
    registerHandoffRoutes(app, app.resources, deps, options);
    registerViewerStream(app, deps, streams, {
      ...options,
      leases,
      keyring,
      handoffs: app.resources,
      // The drive routes' GuestCalls (registered after this plugin, there by the first stream).
      resume: async (tenantId, claimId) => {
        if (app.guestCalls) await resumeBeforeViewing({ db }, app.guestCalls, tenantId, claimId);
      },
    });

    const subscriber = redis.duplicate();
    await listenForRevocations(subscriber, events.prefix, streams);
    app.addHook('onClose', async () => subscriber.disconnect());
    const recheck = setInterval(() => {
      recheckStreams(db, streams).catch((err: unknown) =>
        app.log.warn({ err }, 'viewer stream re-check failed'),
      );
    }, options.recheckIntervalMs ?? DEFAULT_RECHECK_MS);
    recheck.unref();
    // Before the app closes what is left with 1001: viewers learn to reconnect (4503).
    app.addHook('preClose', async () => {
      clearInterval(recheck);
      streams.closeAll('shutting_down');
      await leases.close();
    });
  },
  { name: Plugin.viewer, dependencies: [Plugin.connections, Plugin.identity, Plugin.websockets] },
);
