import type { Claim as ClaimView, ClaimListQuery, ReleaseReason } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import type { Prisma } from '@cubicle/db';
import { nowOf, nudgeReconcile, type Deps } from '../context.js';
import { pageById } from '../page-by-id.js';
import { publishViewerRevocation } from '../viewer/viewer-events.js';
import { claimInclude, toClaimView } from './claim-view.js';
import { claimEndedData } from '../webhooks/event-data.js';
import { endClaim } from '../lifecycle/claim-transitions.js';
import { recordWebhookEvent } from '../webhooks/emit-webhook-event.js';

async function findClaim(deps: Deps, tenantId: string, id: string) {
  const row = await deps.db.claim.findFirst({ where: { id, tenantId }, include: claimInclude });
  if (!row) throw new AppError('not_found', `claim ${id} not found`);
  return row;
}

export async function getClaim(deps: Deps, tenantId: string, id: string): Promise<ClaimView> {
  return toClaimView(await findClaim(deps, tenantId, id));
}

/** listClaims pages newest first; the cursor is the last id of the previous page (ids sort by time). */
export async function listClaims(deps: Deps, tenantId: string, query: ClaimListQuery) {
  const where: Prisma.ClaimWhereInput = {
    tenantId,
    ...(query.status ? { status: query.status } : {}),
    ...(query.pool ? { pool: { name: query.pool } } : {}),
    ...(query.cursor ? { id: { lt: query.cursor } } : {}),
  };
  const rows = await deps.db.claim.findMany({
    where,
    include: claimInclude,
    orderBy: { id: 'desc' },
    take: query.limit + 1,
  });
  return pageById(rows, query.limit, toClaimView);
}

/** heartbeatClaim records liveness; it keeps a claim with an idle timeout from being reclaimed. */
export async function heartbeatClaim(deps: Deps, tenantId: string, id: string): Promise<ClaimView> {
  const now = nowOf(deps);
  const { count } = await deps.db.claim.updateMany({
    where: { id, tenantId, status: { not: 'released' } },
    data: { lastHeartbeatAt: now },
  });
  if (count === 0) {
    await findClaim(deps, tenantId, id); // not_found for unknown ids and other tenants' claims
    throw new AppError('claim_not_active', 'the claim has been released');
  }
  return getClaim(deps, tenantId, id);
}

/** extendClaim sets the TTL from now, capped at max_expires_at; it also counts as a heartbeat. */
export async function extendClaim(
  deps: Deps,
  tenantId: string,
  id: string,
  ttlSeconds: number,
): Promise<ClaimView> {
  const now = nowOf(deps);
  const current = await findClaim(deps, tenantId, id);
  if (current.status === 'released')
    throw new AppError('claim_not_active', 'the claim has been released');
  const expiresAt = new Date(
    Math.min(now.getTime() + ttlSeconds * 1000, current.maxExpiresAt.getTime()),
  );
  const { count } = await deps.db.claim.updateMany({
    where: { id, tenantId, status: { not: 'released' } },
    data: { ttlSeconds, expiresAt, lastHeartbeatAt: now },
  });
  if (count === 0) throw new AppError('claim_not_active', 'the claim has been released');
  return getClaim(deps, tenantId, id);
}

/**
 * releaseClaim ends a claim (idempotent: releasing a released claim returns it unchanged) through
 * the lifecycle's endClaim. Its sandbox goes to releasing and is destroyed by the worker; the
 * pool is asked to refill. Its viewer tickets are revoked in the same transaction and open
 * streams are told to close. Every way a claim ends (API release, TTL, idle, max lifetime, pool
 * deletion, a lost sandbox) goes through here, with its own reason.
 */
export async function releaseClaim(
  deps: Deps,
  tenantId: string,
  id: string,
  reason: ReleaseReason = 'released_by_client',
): Promise<ClaimView> {
  const now = nowOf(deps);
  const released = await deps.db.$transaction(async (tx) => {
    const ended = await endClaim(tx, { tenantId, claimId: id, reason, now });
    if (!ended) return null;
    await tx.viewerTicket.updateMany({
      where: { claimId: id, revokedAt: null },
      data: { revokedAt: now },
    });
    // Announced with the release itself: a release that commits has its event (any way it ends).
    await recordWebhookEvent(tx, tenantId, 'claim.ended', claimEndedData(tx, id, reason), now);
    return ended;
  });
  if (released) {
    await publishViewerRevocation(deps.events, { kind: 'claim', claim_id: id });
    if (released.sandboxId) {
      await deps.queues.enqueue(
        'sandbox.destroy',
        { tenant_id: tenantId, sandbox_id: released.sandboxId },
        { jobId: `destroy-${released.sandboxId}` },
      );
    }
    void nudgeReconcile(deps, tenantId, released.poolId);
  }
  return getClaim(deps, tenantId, id);
}
