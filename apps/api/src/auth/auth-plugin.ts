import type { FastifyInstance } from 'fastify';
import {
  createAuthenticator,
  type AuthContext,
  type Authenticate,
  type AuthenticatorOptions,
} from './authenticate.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the authenticator on routes whose contract `auth` is not `none`; null elsewhere. */
    auth: AuthContext | null;
  }
  interface FastifyInstance {
    /** Present once registerAuth ran; `route()` refuses authenticated routes without it. */
    cubicleAuthenticate?: Authenticate;
  }
}

/**
 * registerAuth makes bearer-key authentication available to `route()`: call it on the root
 * instance before registering routes whose contract `auth` is `api_key` or `admin`.
 */
export function registerAuth(app: FastifyInstance, options: AuthenticatorOptions) {
  app.decorateRequest('auth', null);
  app.decorate('cubicleAuthenticate', createAuthenticator({ log: app.log, ...options }));
}
