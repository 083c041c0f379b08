import { AppError, ErrorCodes, type ErrorBody, type ErrorCodeName } from '@cubicle/contract/errors';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodError } from 'zod';

/** Fastify's own client errors, by code, mapped to ours so every answer has the same envelope. */
const fastifyCodes: Record<string, ErrorCodeName> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'validation_failed',
  FST_ERR_CTP_INVALID_TYPE: 'unsupported_media_type',
  FST_ERR_VALIDATION: 'validation_failed',
};

/** errorBody builds the envelope's body; the shell stream sends the same body in an `error` frame. */
export function errorBody(
  requestId: string,
  code: ErrorCodeName,
  message: string,
  details?: Record<string, unknown>,
): ErrorBody {
  return { code, message, request_id: requestId, ...(details ? { details } : {}) };
}

function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  code: ErrorCodeName,
  message: string,
  details?: Record<string, unknown>,
) {
  return reply
    .status(ErrorCodes[code].status)
    .type('application/json')
    .send({ error: errorBody(request.id, code, message, details) });
}

/** zodIssues turns a ZodError into `details.issues`: which field failed and why. */
export function zodIssues(err: ZodError, where: string) {
  return err.issues.map((i) => ({
    location: where,
    path: i.path.map(String).join('.'),
    code: i.code,
    message: i.message,
  }));
}

/**
 * registerErrorHandler renders every failure as the contract's error envelope. AppErrors and
 * known client errors show their message; anything else is a 500 that says nothing internal
 * (the log has it, with the request id).
 */
export function registerErrorHandler(app: FastifyInstance) {
  app.setErrorHandler((err: FastifyError | AppError, request, reply) => {
    if (err instanceof AppError)
      return sendError(request, reply, err.code, err.message, err.details);
    const mapped = 'code' in err && err.code ? fastifyCodes[err.code] : undefined;
    if (mapped) return sendError(request, reply, mapped, err.message);
    const status = 'statusCode' in err ? err.statusCode : undefined;
    if (status && status >= 400 && status < 500) {
      return sendError(request, reply, 'validation_failed', err.message);
    }
    request.log.error({ err }, 'unhandled error');
    return sendError(request, reply, 'internal_error', 'internal error');
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(
      request,
      reply,
      'route_not_found',
      `no route for ${request.method} ${request.url.split('?')[0]}`,
    ),
  );
}
