import type { RouteDef } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import type { AuthContext, KeyVerifier } from '@cubicle/tenancy';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { RateLimiter } from '../rate-limit/rate-limiter.js';

export type { AuthContext };

/** Authenticate runs before body parsing on every route whose `auth` is not `none`. */
export type Authenticate = (
  request: FastifyRequest,
  reply: FastifyReply,
  level: Exclude<RouteDef['auth'], 'none'>,
) => Promise<AuthContext>;

const BEARER = /^Bearer +([^\s]+) *$/i;

export interface AuthenticatorOptions {
  verifier: KeyVerifier;
  /** Without one (no Redis configured), requests are not rate limited. */
  rateLimiter?: RateLimiter;
  log?: FastifyBaseLogger;
}

/**
 * createAuthenticator checks the bearer key, then the key's rate limit, then the role. Every
 * key problem is the same 401, so a caller cannot learn whether a key exists or was revoked.
 * Rate limiting fails open when Redis errors: an outage of the limiter must not stop claims.
 */
export function createAuthenticator(options: AuthenticatorOptions): Authenticate {
  const { verifier, rateLimiter } = options;
  return async (request, reply, level) => {
    const header = request.headers.authorization;
    const token = header ? BEARER.exec(header)?.[1] : undefined;
    const auth = token ? await verifier.verify(token) : null;
    if (!auth) {
      reply.header('www-authenticate', 'Bearer');
      throw new AppError(
        'unauthenticated',
        'a valid API key is required (Authorization: Bearer <key>)',
      );
    }
    request.auth = auth;
    // The request's lines name its tenant: log redaction by value applies that tenant's secrets
    // only (secretLogHooks), so no tenant's value can rewrite another tenant's lines.
    request.log = request.log.child({ tenant_id: auth.tenantId });
    reply.log = request.log;

    if (rateLimiter) {
      let result;
      try {
        result = await rateLimiter.consume(auth.apiKeyId, auth.requestsPerMinute);
      } catch (err) {
        (options.log ?? request.log).warn({ err }, 'rate limiter unavailable; request allowed');
      }
      if (result) {
        reply.header('x-ratelimit-limit', result.limit);
        reply.header('x-ratelimit-remaining', result.remaining);
        if (!result.isAllowed) {
          reply.header('retry-after', result.resetSeconds);
          throw new AppError('rate_limited', 'too many requests for this API key', {
            limit: result.limit,
            retry_after_seconds: result.resetSeconds,
          });
        }
      }
    }

    if (level === 'admin' && auth.role !== 'admin') {
      throw new AppError('forbidden', 'this endpoint needs an admin API key');
    }
    return auth;
  };
}
