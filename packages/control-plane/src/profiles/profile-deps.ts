import type { Profile as ProfileView } from '@cubicle/contract/api';
import { DEFAULT_PROFILE_PATHS } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import type { Profile as ProfileRow } from '@cubicle/db';
import { ObjectStoreError, type TenantObjects } from '@cubicle/object-store';
import type { Deps, Resources } from '../resources.js';

/**
 * ProfileDeps: profiles talk to the claim's guest (keyring: its token), keep objects in the
 * tenant's store (`objects.forTenant`, the Resources' object store) and write the outbox.
 */
export type ProfileDeps = Deps &
  Pick<Resources, 'keyring'> & {
    objects: { forTenant(tenantId: string): TenantObjects };
  };

/**
 * hasObjects says whether a deps value carries an object store (a worker's Resources do; a
 * narrow view built for another system may not), so the release save can type-check its input.
 */
export const hasObjects = <T extends object>(deps: T): deps is T & Pick<ProfileDeps, 'objects'> =>
  typeof (deps as { objects?: { forTenant?: unknown } }).objects?.forTenant === 'function';

/** pathsOf answers the home paths a pool's profiles keep (its own, or the default set). */
export const pathsOf = (pool: { profilePaths: string[] }): string[] =>
  pool.profilePaths.length > 0 ? pool.profilePaths : [...DEFAULT_PROFILE_PATHS];

/**
 * storeErrorToApp turns an object store failure into the API's error: 503 for an outage (the
 * previous version is untouched), 500 otherwise (an integrity failure is never the caller's).
 */
export function storeErrorToApp(err: unknown): unknown {
  if (!(err instanceof ObjectStoreError)) return err;
  if (err.code === 'object_store_unavailable')
    return new AppError(
      'service_unavailable',
      'the object store is unavailable; the profile was not changed',
    );
  return err;
}

/** toProfileView renders a row as the contract's Profile. */
export function toProfileView(row: ProfileRow): ProfileView {
  return {
    id: row.name,
    version: row.version,
    size_bytes: Number(row.sizeBytes),
    file_count: row.fileCount,
    saved_at: row.savedAt?.toISOString() ?? null,
    claim_id: row.liveClaimId,
    last_claim_id: row.lastClaimId,
    last_used_at: row.lastUsedAt.toISOString(),
    created_at: row.createdAt.toISOString(),
  };
}
