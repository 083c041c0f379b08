import type { RouteDef } from '@cubicle/contract/api';
import { isAppError } from '@cubicle/contract/errors';
import type { Db } from '@cubicle/db';
import { createAuditWriter } from '@cubicle/tenancy';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { auditActionFor, isMutating, pathTarget } from './audit-action.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The contract route a Fastify route serves; set by `route()`. */
    routeDef?: RouteDef;
  }
  interface FastifyInstance {
    /** Resolves when every audit event of finished requests is written (tests, shutdown). */
    auditSettled?: () => Promise<void>;
  }
}

// Per-request audit facts, kept off the request object so routes never depend on the plugin.
const explicitTargets = new WeakMap<FastifyRequest, string>();
const responseIds = new WeakMap<FastifyRequest, string>();
const errorCodes = new WeakMap<FastifyRequest, string>();

/** setAuditTarget names the target of this request's audit event when the default is wrong. */
export function setAuditTarget(request: FastifyRequest, targetId: string) {
  explicitTargets.set(request, targetId);
}

/** noteResponseId records the id of the resource a handler answered with (called by `route()`). */
export function noteResponseId(request: FastifyRequest, body: unknown) {
  if (body && typeof body === 'object' && 'id' in body && typeof body.id === 'string')
    responseIds.set(request, body.id);
}

/**
 * registerAudit writes one audit event per mutating contract call once its response is sent:
 * who (key id and prefix), what (`resource.verb`), which target, success or failure, status and
 * request id. Never bodies, headers or keys. Calls without a verified key (401) and calls the
 * rate limiter refused are not written: there is no tenant to attribute them to, or they would
 * let one flooding key fill the log; the request log keeps them. A failed write is logged and
 * never changes the response (it is already sent). Writes are group-committed (createAuditWriter):
 * a burst of calls costs a few INSERTs, not one each.
 */
export function registerAudit(app: FastifyInstance, options: { db: Db }) {
  const writer = createAuditWriter(options.db);

  app.addHook('onError', async (request, _reply, err) => {
    if (isAppError(err)) errorCodes.set(request, err.code);
  });

  app.addHook('onResponse', async (request, reply) => {
    const def = request.routeOptions.config.routeDef;
    const auth = request.auth;
    if (!def || !auth || !isMutating(def.method)) return;
    const errorCode = errorCodes.get(request);
    if (errorCode === 'rate_limited') return;
    const { action, targetType } = auditActionFor(def);
    const isSuccess = reply.statusCode < 400;
    void writer
      .write({
        tenantId: auth.tenantId,
        actor: { type: 'api_key', apiKeyId: auth.apiKeyId, keyPrefix: auth.keyPrefix },
        action,
        targetType,
        targetId:
          explicitTargets.get(request) ??
          (isSuccess ? responseIds.get(request) : undefined) ??
          pathTarget(def, request.params),
        result: isSuccess ? 'success' : 'failure',
        statusCode: reply.statusCode,
        requestId: request.id,
        details: errorCode ? { error_code: errorCode } : {},
      })
      .catch((err: unknown) => request.log.error({ err, action }, 'audit event not written'));
  });

  const settled = () => writer.settle();
  app.decorate('auditSettled', settled);
  app.addHook('onClose', settled);
}
