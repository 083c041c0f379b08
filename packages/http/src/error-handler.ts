import { AppError, type ErrorBody, type ErrorCodeName } from '@cubicle/contract/errors';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { drainRequestBody } from './drain-request.js';

/** Fastify's own client errors, by code, mapped to ours so the envelope is the same everywhere. */
const fastifyCodes: Record<string, ErrorCodeName> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'validation_failed',
  FST_ERR_CTP_INVALID_TYPE: 'unsupported_media_type',
  FST_ERR_VALIDATION: 'validation_failed',
};

/** The methods a route can be served with, in the order an `Allow` header lists them. */
const ROUTABLE_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** errorBody builds the envelope's body; streams (e.g. the guest's shell socket) send it in a frame. */
export function errorBody(
  requestId: string,
  code: ErrorCodeName,
  message: string,
  details?: Record<string, unknown>,
): ErrorBody {
  return new AppError(code, message, details).toEnvelope(requestId).error;
}

/** sendError answers with the envelope and the code's one status. */
export function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  code: ErrorCodeName,
  message: string,
  details?: Record<string, unknown>,
) {
  const error = new AppError(code, message, details);
  return reply.status(error.status).type('application/json').send(error.toEnvelope(request.id));
}

// zodIssues lives in the contract (the worker describes a refused guest-call body with it too).
export { zodIssues } from '@cubicle/contract/errors';

/**
 * closesWithBodyUnread: this answer ends the connection (the body parser gave up and asked for
 * `Connection: close`, or the client asked for it) while the request body is still arriving.
 */
function closesWithBodyUnread(request: FastifyRequest, reply: FastifyReply): boolean {
  if (request.raw.complete || request.raw.readableEnded) return false;
  return reply.getHeader('connection') === 'close' || reply.raw.shouldKeepAlive === false;
}

/**
 * registerErrorHandler renders every failure as the one error envelope. Only AppErrors and
 * known client errors show their message; anything else is a 500 whose body says nothing
 * internal (the log has the error with the request id). An error answered before the request
 * body was read, on a connection the answer closes, first waits for the rest of the body
 * (drainRequestBody), so the client reads the answer instead of a reset connection.
 */
export function registerErrorHandler(app: FastifyInstance) {
  app.setErrorHandler(async (err: FastifyError | AppError, request, reply) => {
    if (closesWithBodyUnread(request, reply)) await drainRequestBody(request.raw);
    if (err instanceof AppError)
      return sendError(request, reply, err.code, err.message, err.details);
    const mapped = err.code ? fastifyCodes[err.code] : undefined;
    if (mapped) return sendError(request, reply, mapped, err.message);
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      return sendError(request, reply, 'validation_failed', err.message);
    }
    request.log.error({ err }, 'unhandled error');
    return sendError(request, reply, 'internal_error', 'internal error');
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!;
    // A known path asked with a method it does not serve (TRACE, PATCH on a list…) is 405 with
    // the methods it does serve, as HTTP says; only an unknown path is 404.
    // A route that answered "not found" itself (callNotFound) was asked with a method it serves.
    const allowed = ROUTABLE_METHODS.filter((method) => app.findRoute({ method, url: path }));
    if (allowed.length > 0 && !allowed.includes(request.method as (typeof allowed)[number])) {
      reply.header('allow', allowed.join(', '));
      return sendError(
        request,
        reply,
        'method_not_allowed',
        `${request.method} is not served on ${path}; allowed: ${allowed.join(', ')}`,
      );
    }
    return sendError(request, reply, 'route_not_found', `no route for ${request.method} ${path}`);
  });
}
