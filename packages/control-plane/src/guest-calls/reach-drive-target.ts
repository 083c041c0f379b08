import { nowOf } from '../context.js';
import type { WorkerDeps } from '../resources.js';
import {
  findDriveTarget,
  findLiveGuest,
  liveGuestOrThrow,
  type GuestTarget,
  type LiveGuest,
} from '../guest/find-live-guest.js';
import { resumePausedClaim } from '../pause/set-claim-paused.js';

/**
 * DeliverSecrets writes a claim's secrets into its desktop if this process has not yet (the claim
 * request stored them without queueing a delivery); true when it wrote something just now.
 */
export type DeliverSecrets = (guest: LiveGuest) => Promise<boolean>;

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
  deliverSecrets: DeliverSecrets | undefined,
): Promise<LiveGuest> {
  const { lookup, isPaused } = await findDriveTarget(deps.db, target);
  const live = liveGuestOrThrow(lookup, target);
  let isStale = false;
  if (isPaused) {
    await resumePausedClaim(deps, target, 'drive');
    isStale = true;
  }
  if (live.hasSecrets && deliverSecrets) isStale = (await deliverSecrets(live)) || isStale;
  if (!isStale) return live;
  const again = { ...target, now: nowOf(deps) };
  return liveGuestOrThrow(await findLiveGuest(deps.db, again, true), again);
}
