import type { EgressEvent, EgressEventList, EgressEventListQuery } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import type { Resources } from '../resources.js';
import { pageById } from '../page-by-id.js';

/** The columns an event line is shown from (a stored row, or one just written). */
export interface EgressEventFacts {
  id: string;
  claimId: string;
  poolId: string;
  minute: Date;
  firstAt: Date;
  lastAt: Date;
  count: number;
  protocol: string;
  name: string;
  ip: string;
  port: number;
  rule: string;
  process: string | null;
}

/** egressEventView renders one collapsed denial line ('' / -1 are the unknown parts). */
export function egressEventView(row: EgressEventFacts): EgressEvent {
  return {
    id: row.id,
    type: 'egress.denied',
    claim_id: row.claimId,
    pool_id: row.poolId,
    minute: row.minute.toISOString(),
    first_at: row.firstAt.toISOString(),
    last_at: row.lastAt.toISOString(),
    count: row.count,
    protocol: row.protocol as EgressEvent['protocol'],
    name: row.name === '' ? null : row.name,
    ip: row.ip === '' ? null : row.ip,
    port: row.port < 0 ? null : row.port,
    rule: row.rule,
    process: row.process,
  };
}

/**
 * listEgressEvents pages a claim's `egress.denied` events newest first (a line keeps the id of
 * its first denial; its count and last_at grow while its minute lasts). not_found for unknown ids
 * and other tenants' claims.
 */
export async function listEgressEvents(
  deps: Pick<Resources, 'db'>,
  tenantId: string,
  claimId: string,
  query: EgressEventListQuery,
): Promise<EgressEventList> {
  const claim = await deps.db.claim.findFirst({
    where: { id: claimId, tenantId },
    select: { id: true },
  });
  if (!claim) throw new AppError('not_found', `claim ${claimId} not found`);
  const rows = await deps.db.egressEvent.findMany({
    where: {
      claimId,
      verdict: 'denied',
      ...(query.cursor ? { id: { lt: query.cursor } } : {}),
    },
    orderBy: { id: 'desc' },
    take: query.limit + 1,
  });
  return pageById(rows, query.limit, egressEventView);
}

/**
 * hasClaimEnded says whether a claim's egress can no longer change (it was released), for the
 * live stream, which ends then. not_found for unknown ids and other tenants' claims.
 */
export async function hasClaimEnded(
  deps: Pick<Resources, 'db'>,
  tenantId: string,
  claimId: string,
): Promise<boolean> {
  const claim = await deps.db.claim.findFirst({
    where: { id: claimId, tenantId },
    select: { releasedAt: true },
  });
  if (!claim) throw new AppError('not_found', `claim ${claimId} not found`);
  return claim.releasedAt !== null;
}
