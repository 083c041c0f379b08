import { defineRoute, type RouteDef } from '../route-def.js';
import { Tenant, UpdateTenantRequest } from '../tenant.js';
import { readErrors, writeErrors } from './shared.js';

/** The caller's own tenant: read it (any key), change its embedding origins (admin). */
export const tenantRoutes = {
  getTenant: defineRoute({
    operationId: 'getTenant',
    method: 'GET',
    path: '/v1/tenant',
    tag: 'tenant',
    auth: 'api_key',
    summary: "The calling key's tenant: quotas and allowed embedding origins",
    responses: { 200: Tenant },
    errors: [...readErrors],
  }),
  updateTenant: defineRoute({
    operationId: 'updateTenant',
    method: 'PATCH',
    path: '/v1/tenant',
    tag: 'tenant',
    auth: 'admin',
    summary:
      'Set the origins allowed to embed viewer iframes (CSP frame-ancestors) and how long recordings, snapshots and unused profiles are kept',
    body: UpdateTenantRequest,
    responses: { 200: Tenant },
    errors: [...writeErrors],
  }),
} satisfies Record<string, RouteDef>;
