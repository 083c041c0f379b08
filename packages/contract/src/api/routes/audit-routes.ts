import { AuditEvent } from '../audit.js';
import { ListQuery, listOf } from '../common.js';
import { defineRoute, type RouteDef } from '../route-def.js';
import { readErrors } from './shared.js';

/** The tenant's audit log (admin only). */
export const auditRoutes = {
  listAuditEvents: defineRoute({
    operationId: 'listAuditEvents',
    method: 'GET',
    path: '/v1/audit-events',
    tag: 'audit',
    auth: 'admin',
    summary: "The tenant's audit log, newest first",
    query: ListQuery,
    responses: { 200: listOf(AuditEvent) },
    errors: [...readErrors, 'forbidden'],
  }),
} satisfies Record<string, RouteDef>;
