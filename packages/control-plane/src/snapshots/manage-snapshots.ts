import type { Snapshot as SnapshotView, SnapshotListQuery } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { nowOf } from '../context.js';
import { pageById } from '../page-by-id.js';
import { snapshotPrefix } from './snapshot-objects.js';
import { hostChunkCache } from '../profiles/chunk-cache.js';
import { objectsFor, storeErrorToApp, toSnapshotView, type SnapshotDeps } from './snapshot-deps.js';

/** A `creating` row older than this belongs to a request that died: the sweep removes it. */
const STALE_CREATING_MS = 60 * 60 * 1000;

/** listSnapshots pages the tenant's snapshots newest first (ids sort by time). */
export async function listSnapshots(
  deps: Pick<SnapshotDeps, 'db'>,
  tenantId: string,
  query: SnapshotListQuery,
) {
  const rows = await deps.db.snapshot.findMany({
    where: { tenantId, ...(query.cursor ? { id: { lt: query.cursor } } : {}) },
    orderBy: { id: 'desc' },
    take: query.limit + 1,
  });
  return pageById(rows, query.limit, toSnapshotView);
}

/** getSnapshot reads one of the tenant's snapshots; another tenant's id is 404. */
export async function getSnapshot(
  deps: Pick<SnapshotDeps, 'db'>,
  tenantId: string,
  id: string,
): Promise<SnapshotView> {
  const row = await deps.db.snapshot.findFirst({ where: { id, tenantId } });
  if (!row) throw new AppError('not_found', `snapshot ${id} not found`);
  return toSnapshotView(row);
}

/**
 * deleteSnapshot removes the snapshot's objects, then its row: a store that does not answer is
 * 503 and the snapshot stays listed (whole), so a retry finishes the job. Forks already made
 * keep their files (they are copies in their desktops).
 */
export async function deleteSnapshot(
  deps: SnapshotDeps,
  tenantId: string,
  id: string,
): Promise<void> {
  const row = await deps.db.snapshot.findFirst({ where: { id, tenantId }, select: { id: true } });
  if (!row) throw new AppError('not_found', `snapshot ${id} not found`);
  const objects = objectsFor(deps, tenantId);
  // The plaintext this machine keeps goes first, whatever the store answers.
  await hostChunkCache()
    .dropPrefix(tenantId, snapshotPrefix(id))
    .catch(() => undefined);
  try {
    await objects.deletePrefix(snapshotPrefix(id));
  } catch (err) {
    throw storeErrorToApp(err);
  }
  await deps.db.snapshot.deleteMany({ where: { id, tenantId } });
}

/**
 * sweepSnapshots is the retention sweep: it deletes snapshots past their `expires_at` (the
 * tenant's `snapshot_retention_days` after creation) and `creating` rows left by a request that
 * died, objects first. Idempotent; a store outage leaves the rest for the next sweep. Answers how
 * many went. The worker runs it with the pools' periodic sweep (`pools.sweep`).
 */
export async function sweepSnapshots(
  deps: Omit<SnapshotDeps, 'objects'> & Partial<Pick<SnapshotDeps, 'objects'>>,
  limit = 100,
): Promise<number> {
  // A process built without a store (some tests' workers) has nothing to sweep with.
  const { objects } = deps;
  if (!objects) return 0;
  const now = nowOf(deps);
  const due = await deps.db.snapshot.findMany({
    where: {
      OR: [
        { expiresAt: { lte: now } },
        {
          status: { not: 'ready' },
          createdAt: { lte: new Date(now.getTime() - STALE_CREATING_MS) },
        },
      ],
    },
    select: { id: true, tenantId: true },
    orderBy: { expiresAt: 'asc' },
    take: limit,
  });
  let deleted = 0;
  for (const s of due) {
    try {
      await hostChunkCache()
        .dropPrefix(s.tenantId, snapshotPrefix(s.id))
        .catch(() => undefined);
      await objectsFor({ objects }, s.tenantId).deletePrefix(snapshotPrefix(s.id));
      await deps.db.snapshot.deleteMany({ where: { id: s.id } });
      deleted++;
    } catch {
      // Left for the next sweep (the store is down, or the tenant's key is gone with it).
    }
  }
  return deleted;
}
