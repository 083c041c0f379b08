import { nowOf } from '../context.js';
import { holdClaimForHandoff } from '../lifecycle/claim-handoff-hold.js';
import type { Deps } from '../resources.js';
import { endHandoff } from './end-handoff.js';

/**
 * renewHandoffLease records input a human sent through the handoff's control stream: the lease
 * runs `ttl_seconds` from now again, the first input marks who took over (the key that minted
 * the ticket) and when, and the claim's deadlines are held to the new lease. False when the
 * handoff is no longer active or its lease has already run out (the stream must stop taking
 * input). The stream calls it at most every few seconds (the lease is seconds to hours long).
 */
export async function renewHandoffLease(
  deps: Deps,
  input: { handoffId: string; ticketKeyId: string | null },
): Promise<{ isActive: boolean; leaseExpiresAt: Date | null }> {
  const now = nowOf(deps);
  const row = await deps.db.handoff.findUnique({
    where: { id: input.handoffId },
    select: { state: true, ttlSeconds: true, claimId: true, takenAt: true, leaseExpiresAt: true },
  });
  if (!row || row.state !== 'active' || row.leaseExpiresAt.getTime() <= now.getTime())
    return { isActive: false, leaseExpiresAt: null };
  const leaseExpiresAt = new Date(now.getTime() + row.ttlSeconds * 1000);
  const renewed = await deps.db.$transaction(async (tx) => {
    const { count } = await tx.handoff.updateMany({
      where: { id: input.handoffId, state: 'active', leaseExpiresAt: { gt: now } },
      data: {
        leaseExpiresAt,
        lastInputAt: now,
        ...(row.takenAt ? {} : { takenAt: now, takenByKeyId: input.ticketKeyId }),
      },
    });
    if (count === 1) await holdClaimForHandoff(tx, row.claimId, leaseExpiresAt, now);
    return count === 1;
  });
  return renewed ? { isActive: true, leaseExpiresAt } : { isActive: false, leaseExpiresAt: null };
}

/** Handoffs one sweep ends at most; the next sweep takes the rest. */
const SWEEP_LIMIT = 100;

/**
 * expireHandoffs is the worker's sweep (it runs with the reclaim sweep): every active handoff
 * whose lease has passed at `now` ends `expired`, and one whose claim has ended ends `ended`,
 * each through endHandoff (control back, tickets revoked, span, audit, webhook). State lives in
 * the database and endHandoff ends a handoff once, so two workers sweeping at once are fine.
 */
export async function expireHandoffs(deps: Deps): Promise<{ id: string; to: string }[]> {
  const now = nowOf(deps);
  const due = await deps.db.handoff.findMany({
    where: {
      state: 'active',
      OR: [{ leaseExpiresAt: { lte: now } }, { claim: { status: 'released' } }],
    },
    select: { id: true, tenantId: true, claimId: true, claim: { select: { status: true } } },
    orderBy: { leaseExpiresAt: 'asc' },
    take: SWEEP_LIMIT,
  });
  const ended: { id: string; to: string }[] = [];
  for (const h of due) {
    const to = h.claim.status === 'released' ? ('ended' as const) : ('expired' as const);
    await endHandoff(deps, { tenantId: h.tenantId, claimId: h.claimId, handoffId: h.id }, { to });
    ended.push({ id: h.id, to });
  }
  return ended;
}
