import type { FastifyRequest } from 'fastify';

/**
 * tenantOf is the tenant every query of an authenticated route is scoped by. `route()` has
 * authenticated the request before the handler runs; reaching here without auth is a bug.
 */
export function tenantOf(request: FastifyRequest): string {
  if (!request.auth) throw new Error('tenantOf called on an unauthenticated request');
  return request.auth.tenantId;
}
