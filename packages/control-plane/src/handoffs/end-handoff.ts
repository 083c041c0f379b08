import type { ActionResult } from '@cubicle/contract/guest';
import type { Handoff as HandoffView } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { newId, type Handoff } from '@cubicle/db';
import { writeAuditEvent } from '@cubicle/tenancy';
import { nowOf } from '../context.js';
import { restoreClaimAfterHandoff } from '../lifecycle/claim-handoff-hold.js';
import type { Deps } from '../resources.js';
import { publishViewerRevocation } from '../viewer/viewer-events.js';
import { recordWebhookEvent } from '../webhooks/emit-webhook-event.js';
import { toHandoffView } from './handoff-view.js';

/** How a handoff ends: a human returned it, its lease ran out, or its claim ended. */
export type HandoffEnd =
  | {
      to: 'returned';
      /** The key that returned it (the human's session or the agent's). */
      by: { apiKeyId: string; keyPrefix: string } | null;
      note: string | null;
    }
  | { to: 'expired' }
  | { to: 'ended' };

export interface EndHandoffTarget {
  tenantId: string;
  claimId: string;
  handoffId: string;
}

/**
 * spanResult is the ActionResult the claim's action history shows for the span a human held the
 * desktop: `unverifiable` (input was delivered, through the viewer's XTest, and nothing here can
 * tell what it did), with an escalation to observe before the agent goes on.
 */
function spanResult(row: Handoff, heldMs: number, end: HandoffEnd): ActionResult {
  const how =
    end.to === 'returned' ? 'returned' : end.to === 'expired' ? 'lease expired' : 'claim ended';
  return {
    effect: 'unverifiable',
    route: 'xtest',
    retry_safe: false,
    delivery: { mode: 'foreground', pointer_moved: row.takenAt !== null },
    summary: `a human held the desktop for ${Math.round(heldMs / 1000)} s (handoff ${row.id}, ${how})`,
    duration_ms: heldMs,
    escalation: {
      target: 'observe',
      reason: 'effect_unconfirmed',
      hint: 'A person drove the desktop during the handoff: observe before acting on old tokens.',
    },
  };
}

/**
 * endHandoff gives control back to the agent, once: the active handoff becomes `returned` (with
 * the human's note), `expired` or `ended`; the claim gets back the TTL it had left when its agent
 * asked (unless it ended); the handoff's control tickets are revoked; the span goes into the
 * claim's action history (operation `handoff`); an audit event says who held the desktop and for
 * how long, and `claim.handoff_returned` is recorded for webhooks — one transaction. Open control
 * streams are told to close (4004) after the commit. An ended handoff is answered as it is
 * (returning twice is fine); another tenant's is 404.
 */
export async function endHandoff(
  deps: Deps,
  target: EndHandoffTarget,
  end: HandoffEnd,
): Promise<HandoffView> {
  const now = nowOf(deps);
  const outcome = await deps.db.$transaction(async (tx) => {
    const where = { id: target.handoffId, tenantId: target.tenantId, claimId: target.claimId };
    const ended = await tx.handoff.updateMany({
      where: { ...where, state: 'active' },
      data: {
        state: end.to,
        endedAt: now,
        ...(end.to === 'returned'
          ? { endedByKeyId: end.by?.apiKeyId ?? null, note: end.note }
          : {}),
      },
    });
    const row = await tx.handoff.findFirst({ where });
    if (!row) throw new AppError('not_found', `handoff ${target.handoffId} not found`);
    if (ended.count === 0) return { row, ticketIds: [] as string[] };

    const heldMs = Math.max(0, now.getTime() - row.createdAt.getTime());
    if (end.to !== 'ended')
      await restoreClaimAfterHandoff(tx, row.claimId, Number(row.claimTtlLeftMs), now);
    const tickets = await tx.viewerTicket.findMany({
      where: { handoffId: row.id, revokedAt: null },
      select: { id: true },
    });
    await tx.viewerTicket.updateMany({
      where: { handoffId: row.id, revokedAt: null },
      data: { revokedAt: now },
    });
    const claim = await tx.claim.findUnique({
      where: { id: row.claimId },
      select: { sandboxId: true },
    });
    if (claim?.sandboxId) {
      const result = spanResult(row, heldMs, end);
      await tx.actionRecord.create({
        data: {
          id: newId('action_record'),
          tenantId: row.tenantId,
          claimId: row.claimId,
          sandboxId: claim.sandboxId,
          operation: 'handoff',
          request: {
            handoff_id: row.id,
            reason: row.reason,
            for: row.forWhom,
            state: end.to,
            requested_at: row.createdAt.toISOString(),
            ended_at: now.toISOString(),
            note: row.note,
          },
          result,
          effect: result.effect,
          durationMs: heldMs,
          createdAt: now,
        },
      });
    }
    await writeAuditEvent(tx, {
      tenantId: row.tenantId,
      actor:
        end.to === 'returned' && end.by
          ? { type: 'api_key', apiKeyId: end.by.apiKeyId, keyPrefix: end.by.keyPrefix }
          : { type: 'system', component: 'worker' },
      action: `handoff.${end.to}`,
      targetType: 'handoff',
      targetId: row.id,
      result: 'success',
      details: {
        claim_id: row.claimId,
        held_ms: heldMs,
        held_by_key_id: row.takenByKeyId,
        taken_at: row.takenAt ? row.takenAt.toISOString() : null,
        returned_by_key_id: end.to === 'returned' ? (end.by?.apiKeyId ?? null) : null,
        for: row.forWhom,
      },
    });
    await recordWebhookEvent(
      tx,
      row.tenantId,
      'claim.handoff_returned',
      {
        handoff_id: row.id,
        claim_id: row.claimId,
        state: end.to,
        note: row.note,
        held_ms: heldMs,
      },
      now,
    );
    return { row, ticketIds: tickets.map((t) => t.id) };
  });
  await Promise.all(
    outcome.ticketIds.map((id) =>
      publishViewerRevocation(deps.events, {
        kind: 'ticket',
        ticket_id: id,
        reason: 'handoff_ended',
      }),
    ),
  );
  return toHandoffView(outcome.row);
}
