import type { ViewerConnection, ViewerConnectionQuery, ViewerMode } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { sqlOf, type Db } from '@cubicle/db';
import {
  closeViewerConnection,
  insertViewerConnection,
  selectViewerClaim,
  selectViewerConnections,
} from '../repositories/usage-viewers.js';

/** What the stream proxy knows about a stream it admitted. */
export interface ViewerStreamFact {
  tenantId: string;
  claimId: string;
  ticketId: string;
  mode: ViewerMode;
}

/**
 * recordViewerConnected writes the fact that a viewer stream opened and resolves to the row's
 * id, for recordViewerDisconnected. One INSERT on a plain connection (no ORM on the stream
 * path); it never throws — the stream is served whether or not its fact was written, and a
 * failure resolves to null (logged by the caller).
 */
export async function recordViewerConnected(
  db: Db,
  fact: ViewerStreamFact,
  at: Date = new Date(),
): Promise<string | null> {
  const row = await sqlOf(db).row(
    insertViewerConnection,
    fact.tenantId,
    fact.claimId,
    fact.ticketId,
    fact.mode,
    at,
  );
  return row?.id ?? null;
}

/** recordViewerDisconnected closes the row recordViewerConnected wrote (once: later calls no-op). */
export async function recordViewerDisconnected(
  db: Db,
  id: string,
  reason: string,
  at: Date = new Date(),
): Promise<void> {
  await sqlOf(db).exec(closeViewerConnection, id, at, reason.slice(0, 64));
}

/**
 * listViewerConnections pages a claim's viewer streams oldest first (ids grow with time). Another
 * tenant's claim is 404, as an unknown one.
 */
export async function listViewerConnections(
  db: Db,
  tenantId: string,
  claimId: string,
  query: ViewerConnectionQuery,
): Promise<{ data: ViewerConnection[]; next_cursor: string | null }> {
  const sql = sqlOf(db);
  if ((await sql.exec(selectViewerClaim, claimId, tenantId)) === 0)
    throw new AppError('not_found', 'no such claim');
  const rows = await sql.rows(
    selectViewerConnections,
    claimId,
    tenantId,
    query.cursor ?? null,
    query.limit + 1,
  );
  const kept = rows.slice(0, query.limit);
  return {
    data: kept.map((r) => ({
      id: r.id,
      claim_id: claimId,
      ticket_id: r.ticket_id,
      mode: r.mode,
      connected_at: r.connected_at.toISOString(),
      disconnected_at: r.disconnected_at?.toISOString() ?? null,
      close_reason: r.close_reason,
    })),
    next_cursor: rows.length > query.limit ? (kept.at(-1)?.id ?? null) : null,
  };
}
