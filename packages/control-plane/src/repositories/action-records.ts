import { sqlOf, statement, type Db } from '@cubicle/db';

/** One guest action as it is kept: request and result already redacted, as JSON texts. */
export interface ActionRecordInsert {
  id: string;
  tenantId: string;
  claimId: string;
  sandboxId: string;
  operation: string;
  requestJson: string;
  resultJson: string;
  effect: string;
  durationMs: number;
}

// One statement, one round trip: the INSERT, and for a `confirmed` effect the claim's
// first_confirmed_action_at set only while it is still null. The guarded UPDATE is the whole
// "first wins" rule: of two confirmed actions racing on one claim, the second waits for the
// first's row lock, re-reads the row, finds it set and changes nothing; a later one never
// overwrites. Both CTEs run whatever the outer SELECT reads (data-modifying CTEs always do).
const insertActionRecord = statement<
  { first_ms: number | null },
  [string, string, string, string, string, string, string, string, number]
>(
  'cubicle_insert_action_record_v2',
  `WITH kept AS (
     INSERT INTO action_records (id, tenant_id, claim_id, sandbox_id, operation, request,
                                 result, effect, duration_ms, created_at)
     VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8, $9, now())
   ), first AS (
     UPDATE claims SET first_confirmed_action_at = now()
     WHERE id = $3 AND tenant_id = $2 AND $8::text = 'confirmed' AND first_confirmed_action_at IS NULL
     RETURNING GREATEST(0, EXTRACT(EPOCH FROM first_confirmed_action_at - created_at) * 1000)::float8 AS ms
   )
   SELECT (SELECT ms FROM first) AS first_ms`,
);

/**
 * insertActionRecordRow keeps one guest action (plain SQL: the ORM's planning costs more) and,
 * when it is the claim's first `confirmed` one, stamps the claim's first_confirmed_action_at.
 * Answers the claim's time to first confirmed action in ms when this action set it, else null.
 */
export async function insertActionRecordRow(db: Db, r: ActionRecordInsert): Promise<number | null> {
  const row = await sqlOf(db).row(
    insertActionRecord,
    r.id,
    r.tenantId,
    r.claimId,
    r.sandboxId,
    r.operation,
    r.requestJson,
    r.resultJson,
    r.effect,
    r.durationMs,
  );
  return row?.first_ms ?? null;
}
