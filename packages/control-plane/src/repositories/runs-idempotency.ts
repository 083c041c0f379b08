import { statement } from '@cubicle/db';

// The `idempotency_keys` rows of run creation (POST /v1/claims/{id}/runs), on node-postgres:
// the key is inserted in the run's own transaction (inPgTransaction), so key and run commit
// together.

/** Records a key for the run about to be stored; a key already there inserts nothing. */
export const insertRunIdempotencyKey = statement<
  never,
  [
    id: string,
    tenantId: string,
    key: string,
    scope: string,
    requestHash: string,
    runId: string,
    at: Date,
    expiresAt: Date,
  ]
>(
  'cubicle_run_idempotency_v1',
  `INSERT INTO idempotency_keys (id, tenant_id, key, scope, request_hash, response_status,
     resource_id, created_at, completed_at, expires_at)
   VALUES ($1, $2, $3, $4, $5, 202, $6, $7, $7, $8)
   ON CONFLICT (tenant_id, scope, key) DO NOTHING`,
);

/** A stored key, for the replay of a retried create. */
export interface RunIdempotencyRow {
  id: string;
  request_hash: string;
  resource_id: string | null;
  expires_at: Date;
}

export const selectRunIdempotencyKey = statement<
  RunIdempotencyRow,
  [tenantId: string, scope: string, key: string]
>(
  'cubicle_run_idempotency_get_v1',
  `SELECT id, request_hash, resource_id, expires_at FROM idempotency_keys
   WHERE tenant_id = $1 AND scope = $2 AND key = $3`,
);

/** Forgets an expired key (a retry after expiry is a new request). */
export const deleteExpiredRunIdempotencyKey = statement<never, [id: string]>(
  'cubicle_run_idempotency_forget_v1',
  'DELETE FROM idempotency_keys WHERE id = $1 AND expires_at <= now()',
);
