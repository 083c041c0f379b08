import { AppError } from '@cubicle/contract/errors';
import type { Snapshot as SnapshotView } from '@cubicle/contract/api';
import type { Snapshot as SnapshotRow } from '@cubicle/db';
import { ObjectStoreError, type TenantObjects } from '@cubicle/object-store';
import type { Deps, Resources } from '../resources.js';

/**
 * SnapshotDeps: snapshots read the claim's guest (keyring: its token), write the tenant's
 * objects (a control plane built without a store fails every object call: 503) and announce
 * through the webhook outbox.
 */
export type SnapshotDeps = Deps & Pick<Resources, 'keyring' | 'objects'>;

/** objectsFor answers the tenant's sealed view of the installation's object store. */
export function objectsFor(deps: Pick<Resources, 'objects'>, tenantId: string): TenantObjects {
  return deps.objects.forTenant(tenantId);
}

/**
 * storeErrorToApp turns an object store failure into the API's error (503 for an outage, 500
 * otherwise: an integrity failure is never the caller's fault); anything else passes through.
 */
export function storeErrorToApp(err: unknown): unknown {
  if (!(err instanceof ObjectStoreError)) return err;
  if (err.code === 'object_store_unavailable')
    return new AppError('service_unavailable', 'the object store is unavailable; nothing was kept');
  if (err.code === 'object_not_found')
    return new AppError('not_found', 'an object of the snapshot is missing from the store');
  return err;
}

/** toSnapshotView renders a row as the contract's Snapshot. */
export function toSnapshotView(row: SnapshotRow): SnapshotView {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    paths: row.paths,
    source: { claim_id: row.sourceClaimId, pool: row.sourcePool, pool_id: row.sourcePoolId },
    size_bytes: Number(row.sizeBytes),
    stored_bytes: Number(row.storedBytes),
    file_count: row.fileCount,
    created_at: row.createdAt.toISOString(),
    expires_at: row.expiresAt.toISOString(),
  };
}
