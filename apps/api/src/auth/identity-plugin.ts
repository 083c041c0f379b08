import { createKeyVerifier, type KeyVerifierOptions } from '@cubicle/tenancy';
import fp from 'fastify-plugin';
import { registerAudit } from '../audit/audit-plugin.js';
import { Plugin } from '../plugins/plugin-names.js';
import { createRateLimiter } from '../rate-limit/rate-limiter.js';
import { registerApiKeyRoutes } from '../routes/api-keys.js';
import { registerAuditEventRoutes } from '../routes/audit-events.js';
import { registerAuth } from './auth-plugin.js';

export interface IdentityOptions {
  /** Key cache and last_used_at tuning (tests shorten the cache to see revocations at once). */
  keyVerifier?: KeyVerifierOptions | undefined;
}

/**
 * identityPlugin wires who-is-calling into the app: bearer-key authentication (+ per-key rate
 * limit, in Redis) for `route()`, the audit trail of mutating calls, and the api-keys and
 * audit-events routes. Every plugin with authenticated routes depends on it, so none can be
 * registered before it.
 */
export const identityPlugin = fp<IdentityOptions>(
  async (app, options) => {
    const { db, redis } = app.connections;
    const verifier = createKeyVerifier(db, {
      onError: (err) => app.log.warn({ err }, 'api key last_used_at not updated'),
      ...options.keyVerifier,
    });
    registerAuth(app, { verifier, rateLimiter: createRateLimiter(redis) });
    registerAudit(app, { db });
    app.addHook('onClose', () => verifier.settle());
    registerApiKeyRoutes(app, db, verifier);
    registerAuditEventRoutes(app, db);
  },
  { name: Plugin.identity, dependencies: [Plugin.connections] },
);
