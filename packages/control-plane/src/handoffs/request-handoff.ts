import type { Handoff as HandoffView } from '@cubicle/contract/api';
import { newId } from '@cubicle/db';
import { nowOf } from '../context.js';
import { holdClaimForHandoff, lockLiveClaimForHandoff } from '../lifecycle/claim-handoff-hold.js';
import type { Deps } from '../resources.js';
import { recordWebhookEvent } from '../webhooks/emit-webhook-event.js';
import { toHandoffView } from './handoff-view.js';

export interface HandoffRequestInput {
  tenantId: string;
  claimId: string;
  /** The key that asked (the agent's); null for a caller without one. */
  apiKeyId: string | null;
  reason: string;
  for?: string | undefined;
  ttlSeconds: number;
}

/**
 * requestHandoff puts a live claim in the hands of a human: one `active` handoff row whose lease
 * ends after `ttlSeconds` (input through its control stream renews it), the claim's deadlines
 * held meanwhile (holdClaimForHandoff; the reclaim sweep skips its TTL and idle rules, never the
 * hard maximum) and the `claim.handoff_requested` webhook, all in one transaction under the
 * claim's row lock, so two requests for one claim make one handoff and the second is 409
 * `handoff_active`. From the commit on, the worker refuses the claim's driving calls. The control
 * ticket is the viewer's to mint (mintViewerTicket with the handoff id): the REST route and the
 * MCP tool both call this, then mint.
 */
export async function requestHandoff(deps: Deps, input: HandoffRequestInput): Promise<HandoffView> {
  const now = nowOf(deps);
  const row = await deps.db.$transaction(async (tx) => {
    const claim = await lockLiveClaimForHandoff(tx, input.tenantId, input.claimId, now);
    const leaseExpiresAt = new Date(now.getTime() + input.ttlSeconds * 1000);
    const created = await tx.handoff.create({
      data: {
        id: newId('handoff'),
        tenantId: input.tenantId,
        claimId: input.claimId,
        reason: input.reason,
        forWhom: input.for ?? null,
        ttlSeconds: input.ttlSeconds,
        leaseExpiresAt,
        claimTtlLeftMs: BigInt(Math.max(0, claim.expiresAt.getTime() - now.getTime())),
        requestedByKeyId: input.apiKeyId,
        createdAt: now,
      },
    });
    await holdClaimForHandoff(tx, input.claimId, leaseExpiresAt, now);
    await recordWebhookEvent(
      tx,
      input.tenantId,
      'claim.handoff_requested',
      {
        handoff_id: created.id,
        claim_id: input.claimId,
        reason: input.reason,
        for: created.forWhom,
        lease_expires_at: leaseExpiresAt.toISOString(),
      },
      now,
    );
    return created;
  });
  return toHandoffView(row);
}
