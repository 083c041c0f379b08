import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { registerErrorHandler } from './error-handler.js';

/** Request ids from callers are kept when they look like ids, so logs join across services. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** requestIdOf is the caller's `x-request-id` when it looks like an id, else a new `req_<uuid>`. */
export function requestIdOf(req: { headers: IncomingHttpHeaders }): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : `req_${randomUUID()}`;
}

/** ServerOptions are Fastify's, less the request id ones createServer decides. */
export type ServerOptions = Omit<FastifyServerOptions, 'genReqId' | 'requestIdHeader'>;

/**
 * createServer is the Fastify server every Cubicle HTTP process starts from (the API, the guest
 * driver): each request's id is the caller's `x-request-id` when it looks like one, so one id
 * follows a call from the API to the guest and back, and every answer carries it in
 * `x-request-id`; every failure is the one error envelope (registerErrorHandler). Timeouts, body
 * limits and the logger are the caller's, explicitly.
 */
export function createServer(options: ServerOptions): FastifyInstance {
  const app = Fastify({ ...options, requestIdHeader: false, genReqId: requestIdOf });
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  registerErrorHandler(app);
  return app;
}
