import { Routes } from '@cubicle/contract/api';
import type { Db } from '@cubicle/db';
import { listAuditEvents } from '@cubicle/tenancy';
import type { FastifyInstance } from 'fastify';
import { route } from '../lib/define-handler.js';

/** The tenant's audit log, newest first (admin keys only). */
export function registerAuditEventRoutes(app: FastifyInstance, db: Db) {
  route(app, Routes.listAuditEvents, async ({ auth, query }) => ({
    status: 200,
    body: await listAuditEvents(db, auth.tenantId, query),
  }));
}
