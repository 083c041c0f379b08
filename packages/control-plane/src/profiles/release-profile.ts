import type { Sandbox } from '@cubicle/db';
import { ObjectStoreError } from '@cubicle/object-store';
import { open } from '../crypto/keyring.js';
import { sandboxGuestClient } from '../guest/guest-client.js';
import type { WorkerDeps } from '../resources.js';
import { destroySandbox } from '../sandboxes/provision-sandbox.js';
import { saveProfile } from './save-profile.js';
import { hasObjects, pathsOf, type ProfileDeps } from './profile-deps.js';

/**
 * saveProfileAtRelease runs before a released claim's desktop is destroyed: if the claim held a
 * profile (and its restore had finished, so the home is the profile's), the home is saved as the
 * next version with the browsers stopped first, then the hold is given up. It is idempotent: a
 * destroy job retried after a worker died mid-save saves again (the previous version is still
 * whole, see saveProfile) and a finished one finds no hold.
 *
 * Failures: an object store outage is thrown (the destroy job retries, the desktop waits); a
 * desktop that can no longer answer gives the hold up with the previous version kept.
 */
export async function saveProfileAtRelease(
  deps: ProfileDeps,
  sandbox: Pick<Sandbox, 'id' | 'state' | 'guestEndpoint' | 'guestTokenCiphertext'>,
  options: {
    /** Thaws the desktop if its claim was paused (the backend's resume; idempotent). */
    thaw?: (() => Promise<void>) | undefined;
    log?: (message: string, err?: unknown) => void;
  } = {},
): Promise<'saved' | 'none' | 'skipped'> {
  const claims = await deps.db.claim.findMany({
    where: { sandboxId: sandbox.id },
    select: { id: true, tenantId: true, poolId: true },
  });
  if (claims.length === 0) return 'none';
  const profile = await deps.db.profile.findFirst({
    where: { liveClaimId: { in: claims.map((c) => c.id) } },
  });
  if (!profile) return 'none';
  const claim = claims.find((c) => c.id === profile.liveClaimId)!;
  const release = () =>
    deps.db.profile.updateMany({
      where: { id: profile.id, liveClaimId: claim.id },
      data: { liveClaimId: null, lastUsedAt: new Date() },
    });
  // A failed desktop, or one whose restore never finished, does not hold the profile's files.
  if (
    sandbox.state !== 'releasing' ||
    profile.restoredClaimId !== claim.id ||
    !sandbox.guestEndpoint ||
    !sandbox.guestTokenCiphertext
  ) {
    await release();
    return 'skipped';
  }
  try {
    // A paused claim's desktop is frozen: its guest answers nothing until thawed.
    await options.thaw?.();
    const pool = await deps.db.pool.findUniqueOrThrow({
      where: { id: claim.poolId },
      select: { profilePaths: true },
    });
    const guest = sandboxGuestClient(
      sandbox.guestEndpoint,
      open(deps.keyring, sandbox.guestTokenCiphertext, sandbox.id),
    );
    await saveProfile(deps, {
      tenantId: claim.tenantId,
      profile,
      claimId: claim.id,
      guest,
      paths: pathsOf(pool),
      quiesce: true,
      reason: 'release',
    });
  } catch (err) {
    if (err instanceof ObjectStoreError && err.code === 'object_store_unavailable') throw err;
    options.log?.(
      `profile ${profile.name}: not saved at release; the previous version is kept`,
      err,
    );
    await release();
    return 'skipped';
  }
  await release();
  return 'saved';
}

/**
 * destroySandboxSavingProfile is the `sandbox.destroy` job: a released claim's profile is saved
 * while its desktop still exists (saveProfileAtRelease, the desktop thawed first if its claim was
 * paused), then the desktop is destroyed (destroySandbox). A worker without an object store
 * destroys without saving.
 */
export async function destroySandboxSavingProfile(
  deps: WorkerDeps,
  sandboxId: string,
  log?: (message: string, err?: unknown) => void,
): Promise<'deleted' | 'skipped'> {
  const sandbox = await deps.db.sandbox.findUnique({ where: { id: sandboxId } });
  if (sandbox && sandbox.state !== 'deleted' && hasObjects(deps)) {
    const backend = deps.backends[sandbox.backend];
    await saveProfileAtRelease(deps, sandbox, {
      thaw: backend?.resume ? () => backend.resume!(sandboxId) : undefined,
      log,
    });
  }
  return destroySandbox(deps, sandboxId);
}
