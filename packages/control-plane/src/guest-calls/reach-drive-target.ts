import { AppError } from '@cubicle/contract/errors';
import { nowOf } from '../context.js';
import type { WorkerDeps } from '../resources.js';
import {
  findDriveTarget,
  findLiveGuest,
  liveGuestOrThrow,
  type GuestTarget,
  type LiveGuest,
} from '../guest/find-live-guest.js';

/**
 * DeliverSecrets writes a claim's secrets into its desktop if this process has not yet (the claim
 * request stored them without queueing a delivery); true when it wrote something just now.
 */
export type DeliverSecrets = (guest: LiveGuest) => Promise<boolean>;

/**
 * ResumePaused thaws the claim's desktop a driving call found paused (the worker passes pause's
 * resumePausedClaim: pause sits above guest calls, which may not import it).
 */
export type ResumePaused = (target: {
  tenantId: string;
  claimId: string;
  sandboxId: string;
}) => Promise<void>;

/** What the worker lends a driving call to make its desktop ready. */
export interface DriveTargetHooks {
  deliverSecrets?: DeliverSecrets | undefined;
  resumePaused?: ResumePaused | undefined;
}

/**
 * reachDriveTarget answers the guest a driving call of a sandbox's lane talks to, ready for it:
 * the claim live and still holding the sandbox (liveGuestOrThrow), its activity recorded, a paused
 * desktop thawed, its secrets delivered. The common case is one statement (findDriveTarget:
 * lookup and activity together). After a thaw or a secrets delivery, which take time in which the
 * claim may end, the claim is looked up again, so what the call is sent to was live after them.
 */
export async function reachDriveTarget(
  deps: WorkerDeps,
  target: GuestTarget & { sandboxId: string },
  hooks: DriveTargetHooks,
): Promise<LiveGuest> {
  const { lookup, isPaused } = await findDriveTarget(deps.db, target);
  const live = liveGuestOrThrow(lookup, target);
  let isStale = false;
  if (isPaused) {
    // Never a call into a frozen desktop: without a way to thaw it, the call is refused.
    if (!hooks.resumePaused)
      throw new AppError('conflict', 'the desktop is paused: resume the claim first');
    await hooks.resumePaused(target);
    isStale = true;
  }
  if (live.hasSecrets && hooks.deliverSecrets)
    isStale = (await hooks.deliverSecrets(live)) || isStale;
  if (!isStale) return live;
  const again = { ...target, now: nowOf(deps) };
  return liveGuestOrThrow(await findLiveGuest(deps.db, again, true), again);
}
