import type { Pool } from '@cubicle/db';
import { nowOf, type Deps } from '../context.js';
import { expiryOf, takeWarmSandbox } from './create-claim.js';
import { claimActivatedData } from '../webhooks/event-data.js';
import { recordWebhookEvent } from '../webhooks/emit-webhook-event.js';

/**
 * fulfilPendingClaims gives warm sandboxes to the pool's pending claims, oldest first. The TTL
 * starts when the claim becomes active, so time spent waiting for a desktop is not charged.
 * Returns how many claims it fulfilled.
 */
export async function fulfilPendingClaims(deps: Deps, pool: Pool): Promise<number> {
  let fulfilled = 0;
  for (;;) {
    const done = await deps.db.$transaction(async (tx) => {
      const pending = await tx.$queryRaw<{ id: string; ttl_seconds: number }[]>`
        SELECT id, ttl_seconds FROM claims WHERE pool_id = ${pool.id} AND status = 'pending'
        ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED`;
      const claim = pending[0];
      if (!claim) return false;
      const now = nowOf(deps);
      const sandboxId = await takeWarmSandbox(tx, pool, now);
      if (!sandboxId) return false;
      const { expiresAt, maxExpiresAt } = expiryOf(pool, claim.ttl_seconds, now);
      await tx.claim.update({
        where: { id: claim.id },
        data: { status: 'active', sandboxId, expiresAt, maxExpiresAt, lastHeartbeatAt: now },
      });
      await recordWebhookEvent(
        tx,
        pool.tenantId,
        'claim.activated',
        claimActivatedData(tx, claim.id),
        now,
      );
      return true;
    });
    if (!done) return fulfilled;
    fulfilled++;
  }
}
