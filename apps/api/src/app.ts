import { randomUUID } from 'node:crypto';
import { openApiDocument } from '@cubicle/contract/openapi';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { registerErrorHandler } from './plugins/error-handler.js';
import { registerSystemRoutes } from './routes/system.js';

/** A dependency probe for /healthz; it throws when the dependency is unusable. */
export type HealthCheck = () => Promise<unknown>;

export interface BuildOptions {
  logger?: FastifyServerOptions['logger'];
  bodyLimit?: number;
  checks?: Record<string, HealthCheck>;
}

/** Request ids from callers are kept when they look like ids, so logs join across services. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Paths in logs that may carry secrets; pino replaces their values. */
export const redactPaths = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["idempotency-key"]',
  'res.headers["set-cookie"]',
  '*.password',
  '*.secret',
  '*.token',
  '*.key',
];

/**
 * buildApp assembles the API without listening, so tests drive it with `inject` and the
 * process entry point adds only the listener and signal handling.
 */
export async function buildApp(options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    // Explicit bounds: a slow client cannot hold a connection forever.
    connectionTimeout: 30_000,
    requestTimeout: 120_000,
    keepAliveTimeout: 72_000,
    return503OnClosing: true,
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : `req_${randomUUID()}`;
    },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
  });
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  registerErrorHandler(app);
  const doc = openApiDocument();
  registerSystemRoutes(app, options.checks ?? {}, () => doc);
  await app.ready();
  return app;
}
