import type { ListQuery, Pool as PoolView } from '@cubicle/contract/api';
import { nudgeReconcile } from '../context.js';
import type { Deps } from '../resources.js';
import { pageById } from '../page-by-id.js';
import { findLivePool } from './apply-pool.js';
import { countSandboxes } from './count-sandboxes.js';
import { toPoolView } from './pool-view.js';

export async function getPool(deps: Deps, tenantId: string, name: string): Promise<PoolView> {
  const pool = await findLivePool(deps, tenantId, name);
  const counts = await countSandboxes(deps.db, [pool.id]);
  return toPoolView(pool, counts.get(pool.id)!);
}

/** listPools pages by id (creation order); counts come from one grouped query per page. */
export async function listPools(deps: Deps, tenantId: string, query: ListQuery) {
  const rows = await deps.db.pool.findMany({
    where: { tenantId, deletedAt: null, ...(query.cursor ? { id: { gt: query.cursor } } : {}) },
    orderBy: { id: 'asc' },
    take: query.limit + 1,
  });
  const counts = await countSandboxes(
    deps.db,
    rows.slice(0, query.limit).map((p) => p.id),
  );
  return pageById(rows, query.limit, (p) => toPoolView(p, counts.get(p.id)!));
}

/**
 * deletePool drains: the pool stops accepting claims at once (its name is free again), warm and
 * provisioning sandboxes are destroyed by reconcile, live claims run to their end.
 */
export async function deletePool(deps: Deps, tenantId: string, name: string): Promise<PoolView> {
  const pool = await findLivePool(deps, tenantId, name);
  const row = await deps.db.pool.update({
    where: { id: pool.id },
    data: { state: 'draining', deletedAt: new Date() },
  });
  void nudgeReconcile(deps, tenantId, pool.id);
  const counts = await countSandboxes(deps.db, [pool.id]);
  return toPoolView(row, counts.get(pool.id)!);
}
