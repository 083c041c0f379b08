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

const insertActionRecord = statement<
  never,
  [string, string, string, string, string, string, string, string, number]
>(
  'cubicle_insert_action_record_v1',
  `INSERT INTO action_records (id, tenant_id, claim_id, sandbox_id, operation, request,
               result, effect, duration_ms, created_at)
             VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8, $9, now())`,
);

/** insertActionRecordRow keeps one guest action (a plain INSERT: the ORM's planning costs more). */
export async function insertActionRecordRow(db: Db, r: ActionRecordInsert): Promise<void> {
  await sqlOf(db).exec(
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
}
