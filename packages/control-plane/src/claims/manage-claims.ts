import type { Claim as ClaimView, ClaimListQuery, ReleaseReason } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import type { Prisma } from '@cubicle/db';
import { nowOf, nudgeReconcile } from '../context.js';
import type { Deps } from '../resources.js';
import { pageById } from '../page-by-id.js';
import { publishViewerRevocation } from '../viewer/viewer-events.js';
import { claimInclude, toClaimView } from './claim-view.js';
import { extendClaimRow, readClaimRow, touchClaimRow } from '../repositories/claims.js';
import { endClaim } from '../lifecycle/claim-transitions.js';

/** getClaim renders the tenant's claim; not_found for unknown ids and other tenants' claims. */
export async function getClaim(deps: Deps, tenantId: string, id: string): Promise<ClaimView> {
  const row = await readClaimRow(deps.db, tenantId, id);
  if (!row) throw new AppError('not_found', `claim ${id} not found`);
  return toClaimView(row);
}

/** notLive explains why a claim could not be touched: not_found, or released already. */
async function notLive(deps: Deps, tenantId: string, id: string): Promise<never> {
  await getClaim(deps, tenantId, id); // not_found for unknown ids and other tenants' claims
  throw new AppError('claim_not_active', 'the claim has been released');
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
  const row = await touchClaimRow(deps.db, tenantId, id, nowOf(deps));
  return row ? toClaimView(row) : notLive(deps, tenantId, id);
}

/** extendClaim sets the TTL from now, capped at max_expires_at; it also counts as a heartbeat. */
export async function extendClaim(
  deps: Deps,
  tenantId: string,
  id: string,
  ttlSeconds: number,
): Promise<ClaimView> {
  const row = await extendClaimRow(deps.db, tenantId, id, ttlSeconds, nowOf(deps));
  return row ? toClaimView(row) : notLive(deps, tenantId, id);
}

/**
 * releaseClaim ends a claim (idempotent: releasing a released claim returns it unchanged) through
 * the lifecycle's endClaim, which also revokes its viewer tickets and records its `claim.ended`
 * webhook in the same transaction. Its sandbox goes to releasing and is destroyed by the worker;
 * open streams are told to close; the pool is asked to refill. Every way a claim ends (API
 * release, TTL, idle, max lifetime, pool deletion, a lost sandbox) goes through here, with its
 * own reason.
 */
export async function releaseClaim(
  deps: Deps,
  tenantId: string,
  id: string,
  reason: ReleaseReason = 'released_by_client',
): Promise<ClaimView> {
  const end = await endClaim(deps.db, { tenantId, claimId: id, reason, now: nowOf(deps) });
  if (!end) throw new AppError('not_found', `claim ${id} not found`);
  if (end.ended) {
    await publishViewerRevocation(deps.events, { kind: 'claim', claim_id: id });
    const sandboxId = end.row.sandboxId;
    if (sandboxId) {
      await deps.queues.enqueue(
        'sandbox.destroy',
        { tenant_id: tenantId, sandbox_id: sandboxId },
        { jobId: `destroy-${sandboxId}` },
      );
    }
    void nudgeReconcile(deps, tenantId, end.row.poolId);
  }
  return toClaimView(end.row);
}
