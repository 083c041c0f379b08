import websocket from '@fastify/websocket';
import type { FastifyInstance } from 'fastify';

/** Client frames are small: RFB messages (control-mode clipboard pastes are the largest). */
const MAX_CLIENT_FRAME_BYTES = 1024 * 1024;

/**
 * registerWebSockets adds the one WebSocket server of the app (viewer stream, run events). Its
 * sockets are closed by the route groups that own them, each with its own close frame (viewer
 * 4503 "reconnect", runs 1001), in their preClose hooks; the plugin's default preClose would run
 * before those (hooks run in registration order) and close every socket with no code at all, so
 * it is replaced by closeRemainingWebSockets, registered after every route group.
 */
export async function registerWebSockets(app: FastifyInstance): Promise<void> {
  await app.register(websocket, {
    options: {
      maxPayload: MAX_CLIENT_FRAME_BYTES,
      // noVNC asks for `binary`; a client that offers no subprotocol is served without one.
      handleProtocols: (protocols) => (protocols.has('binary') ? 'binary' : false),
    },
    preClose: (done) => done(),
  });
}

/** closeRemainingWebSockets ends what no route group closed with 1001 (going away), last. */
export function closeRemainingWebSockets(app: FastifyInstance): void {
  app.addHook('preClose', (done) => {
    for (const client of app.websocketServer.clients) client.close(1001, 'server shutting down');
    app.websocketServer.close(() => done());
  });
}
