import { Routes } from '@cubicle/contract/api';
import type { Db } from '@cubicle/db';
import { createApiKey, listApiKeys, revokeApiKey, type KeyVerifier } from '@cubicle/tenancy';
import type { FastifyInstance } from 'fastify';
import { route } from '../lib/define-handler.js';

/** API key routes (admin keys only): the new key is in the creation response and nowhere else. */
export function registerApiKeyRoutes(app: FastifyInstance, db: Db, verifier: KeyVerifier) {
  route(app, Routes.listApiKeys, async ({ auth, query }) => ({
    status: 200,
    body: await listApiKeys(db, auth.tenantId, query),
  }));

  route(app, Routes.createApiKey, async ({ auth, body, reply }) => {
    // The body holds the only copy of the key: no cache may keep it.
    reply.header('cache-control', 'no-store');
    return { status: 201, body: await createApiKey(db, { tenantId: auth.tenantId, ...body }) };
  });

  route(app, Routes.revokeApiKey, async ({ auth, params }) => {
    await revokeApiKey(db, auth.tenantId, params.id);
    // Stops at once on this replica; other replicas within their key cache TTL.
    verifier.evict(params.id);
    return { status: 204, body: null };
  });
}
