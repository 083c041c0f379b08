import { Routes } from '@cubicle/contract/api';
import {
  createSnapshot,
  deleteSnapshot,
  getSnapshot,
  listSnapshots,
  type SnapshotDeps,
} from '@cubicle/control-plane';
import type { FastifyInstance } from 'fastify';
import { route } from '../lib/define-handler.js';
import { tenantOf } from '../lib/tenant-of.js';

/**
 * registerSnapshotRoutes mounts snapshot create (idempotent with Idempotency-Key), list, get and
 * delete. Registered by the claim routes: a snapshot is taken of a claim, and forks are claims.
 */
export function registerSnapshotRoutes(app: FastifyInstance, deps: SnapshotDeps) {
  route(app, Routes.createSnapshot, async ({ request, params, body, headers }) => {
    const { snapshot, status } = await createSnapshot(
      deps,
      tenantOf(request),
      params.id,
      body,
      headers['idempotency-key'],
    );
    return { status, body: snapshot };
  });

  route(app, Routes.listSnapshots, async ({ request, query }) => ({
    status: 200,
    body: await listSnapshots(deps, tenantOf(request), query),
  }));

  route(app, Routes.getSnapshot, async ({ request, params }) => ({
    status: 200,
    body: await getSnapshot(deps, tenantOf(request), params.id),
  }));

  route(app, Routes.deleteSnapshot, async ({ request, params }) => {
    await deleteSnapshot(deps, tenantOf(request), params.id);
    return { status: 204, body: null };
  });
}
