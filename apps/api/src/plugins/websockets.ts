import websocket from '@fastify/websocket';
import fp from 'fastify-plugin';
import { Plugin } from './plugin-names.js';

/** Client frames are small: RFB messages (control-mode clipboard pastes are the largest). */
const MAX_CLIENT_FRAME_BYTES = 1024 * 1024;

/**
 * websocketsPlugin adds the one WebSocket server of the app (viewer stream, run events). Its
 * sockets are closed by the plugins that own them, each with its own close frame (viewer 4503
 * "reconnect", runs 1001), in their preClose hooks; the library's default preClose would run
 * before those (hooks run in registration order) and close every socket with no code at all, so
 * it is replaced by closeRemainingWebSocketsPlugin, which depends on those owners.
 */
export const websocketsPlugin = fp(
  async (app) => {
    await app.register(websocket, {
      options: {
        maxPayload: MAX_CLIENT_FRAME_BYTES,
        // noVNC asks for `binary`; a client that offers no subprotocol is served without one.
        handleProtocols: (protocols) => (protocols.has('binary') ? 'binary' : false),
      },
      preClose: (done) => done(),
    });
  },
  { name: Plugin.websockets },
);

/**
 * closeRemainingWebSocketsPlugin ends what no owner closed with 1001 (going away). Its preClose
 * must run after every owner's (the viewer's 4503, the run streams' 1001 with their reason), so it
 * depends on them: registered before either, the app does not start.
 */
export const closeRemainingWebSocketsPlugin = fp(
  async (app) => {
    app.addHook('preClose', (done) => {
      for (const client of app.websocketServer.clients) client.close(1001, 'server shutting down');
      app.websocketServer.close(() => done());
    });
  },
  {
    name: Plugin.closeRemainingWebSockets,
    dependencies: [Plugin.websockets, Plugin.viewer, Plugin.runEventStreams],
  },
);
