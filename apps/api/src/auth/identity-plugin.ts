import type { Db } from '@cubicle/db';
import { createKeyVerifier, type KeyVerifierOptions } from '@cubicle/tenancy';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { registerAudit } from '../audit/audit-plugin.js';
import { createRateLimiter } from '../rate-limit/rate-limiter.js';
import { registerApiKeyRoutes } from '../routes/api-keys.js';
import { registerAuditEventRoutes } from '../routes/audit-events.js';
import { registerAuth } from './auth-plugin.js';

export interface IdentityOptions {
  db: Db;
  /** Without Redis there is no rate limiting (unit setups); the API process always passes it. */
  redis?: Redis;
  keyVerifier?: KeyVerifierOptions;
}

/**
 * registerIdentity wires who-is-calling into the app: bearer-key authentication (+ per-key rate
 * limit) for `route()`, the audit trail of mutating calls, and the api-keys and audit-events
 * routes. Call it before registering any authenticated route.
 */
export function registerIdentity(app: FastifyInstance, options: IdentityOptions) {
  const verifier = createKeyVerifier(options.db, {
    onError: (err) => app.log.warn({ err }, 'api key last_used_at not updated'),
    ...options.keyVerifier,
  });
  registerAuth(app, {
    verifier,
    ...(options.redis ? { rateLimiter: createRateLimiter(options.redis) } : {}),
  });
  registerAudit(app, { db: options.db });
  app.addHook('onClose', () => verifier.settle());
  registerApiKeyRoutes(app, options.db, verifier);
  registerAuditEventRoutes(app, options.db);
}
