import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { tenantRoutes } from '../routes/tenant.js';
import { closeRemainingWebSocketsPlugin, websocketsPlugin } from './websockets.js';

// The ordering rules buildApp once kept in comments are start-up checks: a plugin registered
// before one it needs (or without it) stops the app from starting, naming both.
let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close().catch(() => undefined);
  app = undefined;
});

describe('plugin dependencies are checked at start-up', () => {
  it('the last WebSocket close cannot come before the viewer and the run streams', async () => {
    app = Fastify({ logger: false });
    app.register(websocketsPlugin).register(closeRemainingWebSocketsPlugin);
    await expect(app.ready()).rejects.toMatchObject({
      code: 'FST_ERR_PLUGIN_DEPENDENCY_NOT_REGISTERED',
      message: expect.stringContaining('cubicle-viewer'),
    });
  });

  it('a route group cannot come before the connections and identity plugins', async () => {
    app = Fastify({ logger: false });
    app.register(tenantRoutes);
    await expect(app.ready()).rejects.toMatchObject({
      code: 'FST_ERR_PLUGIN_DEPENDENCY_NOT_REGISTERED',
      message: expect.stringContaining('cubicle-connections'),
    });
  });
});
