import type { ViewerMode } from '@cubicle/contract/api';
import { statement } from '@cubicle/db';

// `viewer_connections`: one row per viewer stream, written on the stream path (node-postgres,
// no ORM). Ids are bigserial, read as text (`id::text`) so they survive JSON.

/** Opens a stream's row; answers its id. */
export const insertViewerConnection = statement<
  { id: string },
  [tenantId: string, claimId: string, ticketId: string, mode: ViewerMode, at: Date]
>(
  'cubicle_viewer_connected_v1',
  `INSERT INTO viewer_connections (tenant_id, claim_id, ticket_id, mode, connected_at)
   VALUES ($1, $2, $3, $4, $5) RETURNING id::text AS id`,
);

/** Closes a stream's row, once (a closed row is left alone). */
export const closeViewerConnection = statement<never, [id: string, at: Date, reason: string]>(
  'cubicle_viewer_disconnected_v1',
  `UPDATE viewer_connections SET disconnected_at = $2, close_reason = $3
   WHERE id = $1 AND disconnected_at IS NULL`,
);

/** Whether the tenant has the claim (viewer connections of another tenant's claim are 404). */
export const selectViewerClaim = statement<unknown, [claimId: string, tenantId: string]>(
  'cubicle_viewer_claim_v1',
  'SELECT 1 FROM claims WHERE id = $1 AND tenant_id = $2',
);

/** A viewer connection as listed. */
export interface ViewerConnectionRow {
  id: string;
  ticket_id: string;
  mode: ViewerMode;
  connected_at: Date;
  disconnected_at: Date | null;
  close_reason: string | null;
}

/** One page of a claim's viewer connections, oldest first, after the cursor id (null: first). */
export const selectViewerConnections = statement<
  ViewerConnectionRow,
  [claimId: string, tenantId: string, cursor: string | null, limit: number]
>(
  'cubicle_viewer_connections_v1',
  `SELECT id::text AS id, ticket_id, mode, connected_at, disconnected_at, close_reason
   FROM viewer_connections
   WHERE claim_id = $1 AND tenant_id = $2 AND ($3::bigint IS NULL OR id > $3::bigint)
   ORDER BY id LIMIT $4`,
);
