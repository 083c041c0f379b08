import type { ViewerConnection, ViewerConnectionQuery, ViewerMode } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { sqlPoolOf, type Db } from '@cubicle/db';

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
  const { rows } = await sqlPoolOf(db).query<{ id: string }>({
    name: 'cubicle_viewer_connected_v1',
    text: `INSERT INTO viewer_connections (tenant_id, claim_id, ticket_id, mode, connected_at)
           VALUES ($1, $2, $3, $4, $5) RETURNING id::text AS id`,
    values: [fact.tenantId, fact.claimId, fact.ticketId, fact.mode, at],
  });
  return rows[0]?.id ?? null;
}

/** recordViewerDisconnected closes the row recordViewerConnected wrote (once: later calls no-op). */
export async function recordViewerDisconnected(
  db: Db,
  id: string,
  reason: string,
  at: Date = new Date(),
): Promise<void> {
  await sqlPoolOf(db).query({
    name: 'cubicle_viewer_disconnected_v1',
    text: `UPDATE viewer_connections SET disconnected_at = $2, close_reason = $3
           WHERE id = $1 AND disconnected_at IS NULL`,
    values: [id, at, reason.slice(0, 64)],
  });
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
  const pool = sqlPoolOf(db);
  const claim = await pool.query('SELECT 1 FROM claims WHERE id = $1 AND tenant_id = $2', [
    claimId,
    tenantId,
  ]);
  if (claim.rowCount === 0) throw new AppError('not_found', 'no such claim');
  const { rows } = await pool.query<{
    id: string;
    ticket_id: string;
    mode: ViewerMode;
    connected_at: Date;
    disconnected_at: Date | null;
    close_reason: string | null;
  }>(
    `SELECT id::text AS id, ticket_id, mode, connected_at, disconnected_at, close_reason
     FROM viewer_connections
     WHERE claim_id = $1 AND tenant_id = $2 AND ($3::bigint IS NULL OR id > $3::bigint)
     ORDER BY id LIMIT $4`,
    [claimId, tenantId, query.cursor ?? null, query.limit + 1],
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
