import { Routes } from '@cubicle/contract/api';
import type { Db } from '@cubicle/db';
import { getTenant, setEmbedOrigins } from '@cubicle/tenancy';
import type { FastifyInstance } from 'fastify';
import { route } from '../lib/define-handler.js';

/** The caller's tenant: any key reads it; admin keys set the viewer's embedding origins. */
export function registerTenantRoutes(app: FastifyInstance, db: Db) {
  route(app, Routes.getTenant, async ({ auth }) => ({
    status: 200,
    body: await getTenant(db, auth.tenantId),
  }));

  route(app, Routes.updateTenant, async ({ auth, body }) => ({
    status: 200,
    body: await setEmbedOrigins(db, auth.tenantId, body.embed_origins),
  }));
}
