import type { ListQuery, ViewerTicketState } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { pageById } from '@cubicle/control-plane';
import type { Db } from '@cubicle/db';

/*
 * Viewer tickets, MCP tokens and replay links are one kind of thing: a signed, claim-scoped
 * bearer whose row (id, expiry, revocation) is the only thing stored. Listing, revoking and
 * reading a row's state are the same for the three; this is that one copy.
 */

/** The row fields every claim token's table has. */
export interface ClaimTokenRow {
  id: string;
  expiresAt: Date;
  revokedAt: Date | null;
}

/**
 * ClaimTokenTable is the part of a Prisma delegate (`db.viewerTicket`, `db.mcpToken`,
 * `db.replayLink`) that listing and revoking use.
 */
export interface ClaimTokenTable<Row extends ClaimTokenRow> {
  findMany(args: {
    where: { claimId: string; tenantId: string; id?: { lt: string } };
    orderBy: { id: 'desc' };
    take: number;
  }): Promise<Row[]>;
  updateMany(args: {
    where: { id: string; tenantId: string; revokedAt: null };
    data: { revokedAt: Date };
  }): Promise<{ count: number }>;
  count(args: { where: { id: string; tenantId: string } }): Promise<number>;
}

/** requireClaim answers not_found unless the tenant has this claim (another tenant's is unknown). */
export async function requireClaim(db: Db, tenantId: string, claimId: string): Promise<void> {
  const claim = await db.claim.findFirst({
    where: { id: claimId, tenantId },
    select: { id: true },
  });
  if (!claim) throw new AppError('not_found', `claim ${claimId} not found`);
}

/** listClaimTokens pages a claim's tokens newest first (ids sort by time); never the strings. */
export async function listClaimTokens<Row extends ClaimTokenRow, View>(
  db: Db,
  table: ClaimTokenTable<Row>,
  tenantId: string,
  claimId: string,
  query: ListQuery,
  view: (row: Row) => View,
) {
  await requireClaim(db, tenantId, claimId);
  const rows = await table.findMany({
    where: { claimId, tenantId, ...(query.cursor ? { id: { lt: query.cursor } } : {}) },
    orderBy: { id: 'desc' },
    take: query.limit + 1,
  });
  return pageById(rows, query.limit, view);
}

/**
 * revokeClaimToken stops a token (idempotent) and answers whether this call revoked it (false:
 * it already was). Another tenant's token is not_found, named as `label` says (`MCP token`).
 */
export async function revokeClaimToken<Row extends ClaimTokenRow>(
  table: ClaimTokenTable<Row>,
  tenantId: string,
  id: string,
  now: Date,
  label: string,
): Promise<boolean> {
  const { count } = await table.updateMany({
    where: { id, tenantId, revokedAt: null },
    data: { revokedAt: now },
  });
  if (count > 0) return true;
  const exists = await table.count({ where: { id, tenantId } });
  if (exists === 0) throw new AppError('not_found', `${label} ${id} not found`);
  return false;
}

/**
 * claimTokenState is what a token stands for now: `ended` when its claim was released (for tokens
 * that end with their claim), else `revoked`, else `expired`, else `active`.
 */
export function claimTokenState(
  token: { isEnded: boolean; isRevoked: boolean; expiresAt: Date },
  now: Date,
): ViewerTicketState {
  if (token.isEnded) return 'ended';
  if (token.isRevoked) return 'revoked';
  return token.expiresAt.getTime() <= now.getTime() ? 'expired' : 'active';
}
