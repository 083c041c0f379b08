import type { Keyring, ViewerEvents } from '@cubicle/control-plane';
import type { Db } from '@cubicle/db';
import {
  createStreamLeases,
  DEFAULT_STREAM_LIMITS,
  listenForRevocations,
  LiveStreams,
  recheckStreams,
  type TicketDeps,
} from '@cubicle/viewer';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { registerViewerTicketRoutes } from '../routes/viewer-tickets.js';
import type { ViewerOptions } from './viewer-options.js';
import { registerViewerStream } from './viewer-stream.js';

const DEFAULT_RECHECK_MS = 5_000;

export interface ViewerWiring {
  db: Db;
  redis?: Redis;
  events?: ViewerEvents;
  options: ViewerOptions;
  /** Opens sandboxes' guest tokens: the stream proves it holds one to the sandbox's VNC port. */
  keyring?: Keyring;
}

/**
 * registerViewer wires viewer tickets and the stream proxy: the ticket routes, the WebSocket
 * stream, this process's registry of open streams, its Redis subscription to revocations (so a
 * DELETE on any replica, or the worker ending a claim, closes streams here within a second),
 * and a periodic database re-check in case a pub/sub message was lost. The app's WebSocket
 * server (plugins/websockets.ts) must be registered first.
 */
export async function registerViewer(app: FastifyInstance, wiring: ViewerWiring) {
  const { db, redis, options } = wiring;
  const deps: TicketDeps = {
    db,
    keys: options.keys,
    ...(wiring.events ? { events: wiring.events } : {}),
  };
  const limits = { ...DEFAULT_STREAM_LIMITS, ...options.limits };
  const streams = new LiveStreams(limits);
  // With Redis the limits are cluster-wide (leases in Redis); LiveStreams keeps enforcing them
  // per process too, which is what remains when Redis is unreachable.
  const leases =
    redis && wiring.events
      ? createStreamLeases(redis, {
          prefix: wiring.events.prefix,
          limits,
          ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}),
          onError: (err) => app.log.warn({ err }, 'viewer stream lease: Redis failed'),
        })
      : undefined;
  registerViewerTicketRoutes(app, deps, options);
  registerViewerStream(app, deps, streams, {
    ...options,
    ...(leases ? { leases } : {}),
    ...(wiring.keyring ? { keyring: wiring.keyring } : {}),
  });

  if (redis && wiring.events) {
    const subscriber = redis.duplicate();
    await listenForRevocations(subscriber, wiring.events.prefix, streams);
    app.addHook('onClose', async () => subscriber.disconnect());
  }
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
    await leases?.close();
  });
  return streams;
}
