import { nowOf } from '../context.js';
import { idleClaimRows } from '../repositories/claim-pauses.js';
import type { Deps } from '../resources.js';

/**
 * pauseIdleClaims is auto-pause's sweep (beside the reclaim sweep): every live claim of a pool
 * with `idle_pause_seconds` that no driving call, viewer connection or run has touched for that
 * long gets an `idle_pause` job on its sandbox's lane, so it runs after any call already queued.
 * Race-safe across replicas: the job re-checks idleness under the claim's pause lock
 * (setClaimPaused), so a call that came in since, or a second replica's job, pauses nothing.
 */
export async function pauseIdleClaims(deps: Deps, limit = 200): Promise<number> {
  const idle = await idleClaimRows(deps.db, nowOf(deps), limit);
  for (const claim of idle)
    await deps.queues.enqueue('claim.pause', {
      tenant_id: claim.tenant_id,
      claim_id: claim.id,
      sandbox_id: claim.sandbox_id,
      action: 'idle_pause',
    });
  return idle.length;
}
