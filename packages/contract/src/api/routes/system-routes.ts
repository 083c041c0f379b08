import { defineRoute, type RouteDef } from '../route-def.js';
import { Healthz, Version } from '../system.js';

/** Unauthenticated system endpoints. */
export const systemRoutes = {
  healthz: defineRoute({
    operationId: 'getHealthz',
    method: 'GET',
    path: '/healthz',
    tag: 'system',
    auth: 'none',
    summary: 'Liveness and dependency checks',
    responses: { 200: Healthz },
    errors: ['service_unavailable'],
  }),
  version: defineRoute({
    operationId: 'getVersion',
    method: 'GET',
    path: '/v1/version',
    tag: 'system',
    auth: 'none',
    summary: 'Service and protocol versions',
    responses: { 200: Version },
    errors: [],
  }),
} satisfies Record<string, RouteDef>;
