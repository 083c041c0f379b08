import type { ActionRecord, ListQuery } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import type { Deps } from '../resources.js';
import { pageById } from '../page-by-id.js';

/**
 * listActions pages a claim's stored ActionResults newest first (ids sort by time, so the cursor
 * is the last id of the previous page). Released claims keep their history; another tenant's
 * claim is 404.
 */
export async function listActions(deps: Deps, tenantId: string, claimId: string, query: ListQuery) {
  const claim = await deps.db.claim.findFirst({
    where: { id: claimId, tenantId },
    select: { id: true },
  });
  if (!claim) throw new AppError('not_found', 'no such claim');
  const rows = await deps.db.actionRecord.findMany({
    where: { claimId, tenantId, ...(query.cursor ? { id: { lt: query.cursor } } : {}) },
    orderBy: { id: 'desc' },
    take: query.limit + 1,
  });
  return pageById(
    rows,
    query.limit,
    (r) =>
      ({
        id: r.id,
        claim_id: r.claimId,
        sandbox_id: r.sandboxId,
        operation: r.operation,
        request: r.request as Record<string, unknown>,
        result: r.result as ActionRecord['result'],
        effect: r.effect as ActionRecord['effect'],
        duration_ms: r.durationMs,
        created_at: r.createdAt.toISOString(),
      }) satisfies ActionRecord,
  );
}
