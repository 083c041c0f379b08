import type { Claim, CreateClaimRequest } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { newId } from '@cubicle/db';
import type { Profile as ProfileRow } from '@cubicle/db';
import { nowOf } from '../context.js';
import { releaseClaim } from '../claims/manage-claims.js';
import { isClaimActive } from '../lifecycle/claim-liveness.js';
import { insertProfileIfAbsent } from '../repositories/profiles.js';
import { guestClientFor } from '../guest/guest-client.js';
import type { IdempotencyInput } from '../idempotency/idempotency.js';
import { createClaimWithSecrets } from '../secrets/create-claim-with-secrets.js';
import type { ApiKeyRole } from '../secrets/usable-by.js';
import { restoreHome } from './home-transfer.js';
import { storeErrorToApp, type ProfileDeps } from './profile-deps.js';
import { prefetchProfile, type ProfilePrefetch } from './prefetch-profile.js';
import { blobKey, readManifest } from './profile-objects.js';
import { hostChunkCache } from './chunk-cache.js';

/** How long a claim waits for the previous holder's save at release before 409 profile_in_use. */
const RELEASE_SAVE_WAIT_MS = 90_000;
const POLL_MS = 100;

/**
 * claimWithProfile answers a claim request with `profile`: the plain claim path (a warm desktop
 * in one statement), then the profile held for this claim (one conditional UPDATE: two racing
 * claims cannot both hold it), then its last saved version restored through the guest, all
 * before the call answers. A profile's first use creates it and starts empty.
 *
 * - Held by another live claim: 409 `profile_in_use` before anything is taken. Held by a claim
 *   that has ended but whose save at release is still running: the call waits for that save
 *   (up to 90 s) so the new claim gets what it saved.
 * - Idempotent: a retry with the same key and body replays the same claim (createClaim); the
 *   hold is already this claim's, and the restore is done again only if it had not finished
 *   (`restored_claim_id`).
 * - Never answers 202: a desktop not ready within `wait_seconds` is released and the call is
 *   504 timeout (a pending claim would hand out a desktop without its profile).
 * - A failed restore gives the hold up first (so the release does not save the half-restored
 *   home over the profile), then releases the claim.
 */
export async function claimWithProfile(
  deps: ProfileDeps,
  tenantId: string,
  poolName: string,
  request: CreateClaimRequest & { profile: string },
  idempotency?: Omit<IdempotencyInput, 'body'>,
  role: ApiKeyRole = 'admin',
): Promise<{ status: 200 | 201; body: Claim }> {
  // Read loosely: forks' fields (`from_snapshot`, `count`) belong to the snapshots' contract.
  const fork = request as { from_snapshot?: unknown; count?: unknown };
  if (fork.from_snapshot !== undefined || fork.count !== undefined)
    throw new AppError('validation_failed', 'a claim with `profile` cannot be a fork', {
      issues: [
        {
          location: 'body',
          path: 'profile',
          code: 'custom',
          message: '`profile` and `from_snapshot`/`count` do not go together',
        },
      ],
    });
  const pool = await deps.db.pool.findFirst({
    where: { tenantId, name: poolName, deletedAt: null },
    select: { id: true },
  });
  if (!pool) throw new AppError('not_found', `pool ${poolName} not found`);
  // A first use creates the profile; two first uses at once both find the one row.
  await insertProfileIfAbsent(deps.db, newId('profile'), tenantId, request.profile);
  let profile = await deps.db.profile.findUniqueOrThrow({
    where: { tenantId_name: { tenantId, name: request.profile } },
  });
  profile = await waitForHolder(deps, profile, idempotency !== undefined);
  // The saved version's manifest and first chunks are read while the desktop is taken.
  const objects = deps.objects.forTenant(tenantId);
  const cache = hostChunkCache();
  const early =
    profile.version > 0
      ? prefetchProfile(objects, profile.id, profile.version, async (hashes) =>
          (await cache.isUsable())
            ? new Set(
                hashes.filter((h) => cache.findSync(tenantId, blobKey(profile.id, h)) !== null),
              )
            : new Set<string>(),
        )
      : undefined;
  try {
    return await holdAndRestore(deps, tenantId, poolName, request, profile, early, {
      idempotency,
      role,
    });
  } finally {
    early?.drop();
  }
}

/** holdAndRestore is claimWithProfile once the profile is free: claim, hold, restore. */
async function holdAndRestore(
  deps: ProfileDeps,
  tenantId: string,
  poolName: string,
  request: CreateClaimRequest & { profile: string },
  profile: ProfileRow,
  early: ProfilePrefetch | undefined,
  options: { idempotency: Omit<IdempotencyInput, 'body'> | undefined; role: ApiKeyRole },
): Promise<{ status: 200 | 201; body: Claim }> {
  const { idempotency, role } = options;
  const taken = await createClaimWithSecrets(deps, tenantId, poolName, request, idempotency, role);
  const claimId = taken.claim.id;
  if (!isClaimActive(taken.claim.status)) {
    await releaseClaim(deps, tenantId, claimId).catch(() => undefined);
    throw new AppError(
      'timeout',
      `no desktop of pool ${poolName} was ready within wait_seconds (${request.wait_seconds}) to restore the profile into`,
    );
  }
  const now = nowOf(deps);
  const held = await deps.db.profile.updateMany({
    where: { id: profile.id, OR: [{ liveClaimId: null }, { liveClaimId: claimId }] },
    data: { liveClaimId: claimId, lastClaimId: claimId, lastUsedAt: now },
  });
  if (held.count === 0) {
    // Not the holder (a new claim, or a replayed one that lost the race): it never gets the files.
    await releaseClaim(deps, tenantId, claimId).catch(() => undefined);
    const holder = await deps.db.profile.findUnique({ where: { id: profile.id } });
    throw inUse(request.profile, holder?.liveClaimId ?? null);
  }
  const current = await deps.db.profile.findUniqueOrThrow({ where: { id: profile.id } });
  if (current.restoredClaimId !== claimId) {
    try {
      if (current.version > 0) {
        const objects = deps.objects.forTenant(tenantId);
        // Read early for the version saved then; a save since (none can run while the profile
        // waits for its holder, but the row is the judge) reads afresh.
        const ahead = early?.version === current.version ? early : undefined;
        const [manifest, guest] = await Promise.all([
          ahead?.manifest ?? readManifest(objects, current.id, current.version),
          guestClientFor(deps, { tenantId, claimId, now: nowOf(deps) }),
        ]);
        await restoreHome(guest, objects, current.id, manifest, ahead?.source);
      }
      await deps.db.profile.updateMany({
        where: { id: profile.id, liveClaimId: claimId },
        data: { restoredClaimId: claimId },
      });
    } catch (err) {
      await deps.db.profile
        .updateMany({
          where: { id: profile.id, liveClaimId: claimId },
          data: { liveClaimId: null },
        })
        .catch(() => undefined);
      await releaseClaim(deps, tenantId, claimId).catch(() => undefined);
      throw storeErrorToApp(err);
    }
  }
  return { status: taken.status === 201 ? 201 : 200, body: taken.claim };
}

function inUse(name: string, claimId: string | null) {
  return new AppError('profile_in_use', `profile ${name} is held by another claim`, {
    claim_id: claimId,
  });
}

/**
 * waitForHolder answers the profile once no other claim holds it. A live holder is 409 at once
 * (unless the request carries an idempotency key: it may be the replay of that very claim, which
 * the hold step then recognises); an ended holder is still saving at release, and is waited for.
 */
async function waitForHolder(
  deps: ProfileDeps,
  profile: ProfileRow,
  mayBeReplay: boolean,
): Promise<ProfileRow> {
  const deadline = Date.now() + RELEASE_SAVE_WAIT_MS;
  for (let row = profile; ;) {
    if (!row.liveClaimId) return row;
    const holder = await deps.db.claim.findUnique({
      where: { id: row.liveClaimId },
      select: { status: true },
    });
    if (holder && holder.status !== 'released') {
      if (mayBeReplay) return row;
      throw inUse(row.name, row.liveClaimId);
    }
    if (Date.now() > deadline) throw inUse(row.name, row.liveClaimId);
    await new Promise((r) => setTimeout(r, POLL_MS));
    row = await deps.db.profile.findUniqueOrThrow({ where: { id: row.id } });
  }
}
