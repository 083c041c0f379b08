import type { Handoff as HandoffView, HandoffListQuery } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { pageById } from '../page-by-id.js';
import type { DbDeps } from '../resources.js';
import { toHandoffView } from './handoff-view.js';

/**
 * listHandoffs pages a claim's handoffs newest first (ids sort by time); `state` filters. Ended
 * claims keep theirs; another tenant's claim is 404.
 */
export async function listHandoffs(
  deps: DbDeps,
  tenantId: string,
  claimId: string,
  query: HandoffListQuery,
) {
  const claim = await deps.db.claim.findFirst({
    where: { id: claimId, tenantId },
    select: { id: true },
  });
  if (!claim) throw new AppError('not_found', `claim ${claimId} not found`);
  const rows = await deps.db.handoff.findMany({
    where: {
      claimId,
      tenantId,
      ...(query.state ? { state: query.state } : {}),
      ...(query.cursor ? { id: { lt: query.cursor } } : {}),
    },
    orderBy: { id: 'desc' },
    take: query.limit + 1,
  });
  return pageById(rows, query.limit, toHandoffView);
}

/** getHandoff reads one handoff of the tenant's claim; anything else is 404. */
export async function getHandoff(
  deps: DbDeps,
  tenantId: string,
  claimId: string,
  handoffId: string,
): Promise<HandoffView> {
  const row = await deps.db.handoff.findFirst({ where: { id: handoffId, tenantId, claimId } });
  if (!row) throw new AppError('not_found', `handoff ${handoffId} not found`);
  return toHandoffView(row);
}
