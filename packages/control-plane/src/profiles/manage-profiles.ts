import type {
  Profile as ProfileView,
  ProfileListQuery,
  ProfileSaveResult,
} from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { nowOf } from '../context.js';
import { guestClientFor } from '../guest/guest-client.js';
import { profilesDueForRetention } from '../repositories/profiles.js';
import { saveProfile } from './save-profile.js';
import { pathsOf, storeErrorToApp, toProfileView, type ProfileDeps } from './profile-deps.js';
import { profilePrefix } from './profile-objects.js';
import { hostChunkCache } from './chunk-cache.js';

/** listProfiles pages the tenant's profiles by id (their names sort as text). */
export async function listProfiles(
  deps: Pick<ProfileDeps, 'db'>,
  tenantId: string,
  query: ProfileListQuery,
): Promise<{ data: ProfileView[]; next_cursor: string | null }> {
  const rows = await deps.db.profile.findMany({
    where: { tenantId, ...(query.cursor ? { name: { gt: query.cursor } } : {}) },
    orderBy: { name: 'asc' },
    take: query.limit + 1,
  });
  const page = rows.slice(0, query.limit);
  return {
    data: page.map(toProfileView),
    next_cursor: rows.length > query.limit ? page.at(-1)!.name : null,
  };
}

/** getProfile: not_found for unknown names and other tenants' profiles. */
export async function getProfile(
  deps: Pick<ProfileDeps, 'db'>,
  tenantId: string,
  name: string,
): Promise<ProfileView> {
  const row = await deps.db.profile.findUnique({ where: { tenantId_name: { tenantId, name } } });
  if (!row) throw new AppError('not_found', `profile ${name} not found`);
  return toProfileView(row);
}

/**
 * deleteProfile removes a profile no live claim holds: its objects first (every version and
 * chunk under its prefix), then the row, so a deletion cut short leaves a row a retry finishes
 * rather than objects nobody can name. Held: 409 profile_in_use.
 */
export async function deleteProfile(deps: ProfileDeps, tenantId: string, name: string) {
  const row = await deps.db.profile.findUnique({ where: { tenantId_name: { tenantId, name } } });
  if (!row) throw new AppError('not_found', `profile ${name} not found`);
  if (row.liveClaimId)
    throw new AppError('profile_in_use', `profile ${name} is held by a claim`, {
      claim_id: row.liveClaimId,
    });
  await removeProfile(deps, row);
}

async function removeProfile(deps: ProfileDeps, row: { id: string; tenantId: string }) {
  // The plaintext this machine keeps goes first, whatever the store answers.
  await hostChunkCache()
    .dropPrefix(row.tenantId, profilePrefix(row.id))
    .catch(() => undefined);
  try {
    await deps.objects.forTenant(row.tenantId).deletePrefix(profilePrefix(row.id));
  } catch (err) {
    throw storeErrorToApp(err);
  }
  await deps.db.profile.deleteMany({ where: { id: row.id, liveClaimId: null } });
}

/**
 * saveClaimProfile saves the profile a live claim holds, now (files copied as they are; the
 * browsers keep running). 404 when the claim holds none or is not the tenant's.
 */
export async function saveClaimProfile(
  deps: ProfileDeps,
  tenantId: string,
  claimId: string,
): Promise<ProfileSaveResult> {
  // A claim that holds no profile is 404 before its desktop is looked at (one still starting
  // has no guest to ask, and a save it never needed is no backend failure).
  const profile = await deps.db.profile.findFirst({ where: { tenantId, liveClaimId: claimId } });
  if (!profile || profile.restoredClaimId !== claimId)
    throw new AppError('not_found', `claim ${claimId} holds no profile`);
  const guest = await guestClientFor(deps, { tenantId, claimId, now: nowOf(deps) });
  const claim = await deps.db.claim.findUniqueOrThrow({
    where: { id: claimId },
    select: { pool: { select: { profilePaths: true } } },
  });
  try {
    return await saveProfile(deps, {
      tenantId,
      profile,
      claimId,
      guest,
      paths: pathsOf(claim.pool),
      quiesce: false,
      reason: 'request',
    });
  } catch (err) {
    throw storeErrorToApp(err);
  }
}

/**
 * sweepProfiles deletes profiles no claim holds that were last used longer ago than their
 * tenant's `profile_retention_days`. Answers how many went; one that fails is tried next sweep.
 */
export async function sweepProfiles(deps: ProfileDeps, limit = 100): Promise<number> {
  const now = nowOf(deps);
  const due = await profilesDueForRetention(deps.db, now, limit);
  let removed = 0;
  for (const d of due) {
    try {
      await removeProfile(deps, { id: d.id, tenantId: d.tenant_id });
      removed += 1;
    } catch {
      // the store is down: the next sweep tries again
    }
  }
  return removed;
}
