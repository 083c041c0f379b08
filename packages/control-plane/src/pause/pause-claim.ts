import type { Claim } from '@cubicle/contract/api';
import { getClaim } from '../claims/manage-claims.js';
import type { GuestCalls } from '../guest-calls/guest-calls.js';
import { isClaimPausedRow } from '../repositories/claim-pauses.js';
import type { Deps } from '../resources.js';

/**
 * How long the API waits for a pause or resume: it runs on the sandbox's lane after the calls
 * queued before it (a long `wait_for` among them), then freezes in milliseconds.
 */
export const PAUSE_WAIT_MS = 30_000;

/**
 * pauseClaim pauses the desktop of the tenant's live claim through the worker that drives its
 * sandbox (a `claim.pause` job on the sandbox's lane: after the calls queued before it), then
 * answers the claim with `paused_at` set. Idempotent. 404 for an unknown claim, 409
 * claim_not_active / not_supported_by_backend / handoff_active as setClaimPaused decides.
 */
export async function pauseClaim(
  deps: Deps,
  calls: GuestCalls,
  tenantId: string,
  claimId: string,
): Promise<Claim> {
  await calls.pause(tenantId, claimId, 'pause', PAUSE_WAIT_MS);
  return getClaim(deps, tenantId, claimId);
}

/** resumeClaim thaws the tenant's paused claim (idempotent) and answers the claim. */
export async function resumeClaim(
  deps: Deps,
  calls: GuestCalls,
  tenantId: string,
  claimId: string,
): Promise<Claim> {
  await calls.pause(tenantId, claimId, 'resume', PAUSE_WAIT_MS);
  return getClaim(deps, tenantId, claimId);
}

/**
 * resumeBeforeViewing resumes a paused claim before a viewer stream is bridged to its desktop
 * (its VNC server is frozen with it). A running claim costs one indexed read and never waits
 * behind its lane's calls; the viewer's open connection then keeps auto-pause away.
 */
export async function resumeBeforeViewing(
  deps: Pick<Deps, 'db'>,
  calls: GuestCalls,
  tenantId: string,
  claimId: string,
): Promise<void> {
  if (await isClaimPausedRow(deps.db, tenantId, claimId))
    await calls.pause(tenantId, claimId, 'resume', PAUSE_WAIT_MS, 'viewer');
}
