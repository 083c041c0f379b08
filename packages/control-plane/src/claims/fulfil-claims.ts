import type { Pool } from '@cubicle/db';
import { nowOf } from '../context.js';
import type { Deps } from '../resources.js';
import { activatePendingClaims } from '../lifecycle/claim-transitions.js';
import { publishEgressChange } from '../egress/egress-changes.js';
import { claimActivatedData } from '../webhooks/event-data.js';
import { recordWebhookEvent } from '../webhooks/emit-webhook-event.js';

/** Claims activated per transaction: their events commit with them; a long queue is not one long lock. */
const FULFIL_BATCH = 32;

/**
 * fulfilPendingClaims gives warm sandboxes to the pool's pending claims, oldest first, by the
 * same rules as a claim that finds one at once (the lifecycle's activatePendingClaims). The TTL
 * starts when the claim becomes active, so time spent waiting for a desktop is not charged.
 * Each activation and its `claim.activated` event commit together. Returns how many it fulfilled.
 */
export async function fulfilPendingClaims(deps: Deps, pool: Pool): Promise<number> {
  let fulfilled = 0;
  for (;;) {
    const activated = await deps.db.$transaction(async (tx) => {
      const now = nowOf(deps);
      const claims = await activatePendingClaims(tx, pool.id, now, FULFIL_BATCH);
      for (const c of claims)
        await recordWebhookEvent(
          tx,
          c.tenantId,
          'claim.activated',
          claimActivatedData(tx, c.claimId),
          now,
        );
      return claims.length;
    });
    fulfilled += activated;
    // Activated claims' narrowings now apply to their sandboxes: the egress point reloads the pool's.
    if (activated > 0) void publishEgressChange(deps, { pool_id: pool.id });
    if (activated < FULFIL_BATCH) return fulfilled;
  }
}
