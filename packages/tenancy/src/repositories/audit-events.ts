// The audit events repository: one event written with the change it records (in the caller's
// transaction), or many at once by the API's group-committing writer. Plain INSERTs: the ORM's
// query planning costs more than the write.
import { sqlOf, statement, type Db, type Prisma } from '@cubicle/db';

/**
 * The columns of one event in order: id, tenant_id, actor_type, api_key_id, key_prefix, action,
 * target_type, target_id, result, status_code, request_id, details (JSON text).
 */
export type AuditEventValues = [
  id: string,
  tenantId: string,
  actorType: string,
  apiKeyId: string | null,
  keyPrefix: string | null,
  action: string,
  targetType: string,
  targetId: string | null,
  result: string,
  statusCode: number | null,
  requestId: string | null,
  detailsJson: string,
];

const insertAuditEvent = statement<never, AuditEventValues>(
  'cubicle_insert_audit_event_v1',
  `INSERT INTO audit_events (id, tenant_id, actor_type, api_key_id, key_prefix, action, target_type,
                              target_id, result, status_code, request_id, details, created_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::int, $11, $12::jsonb, now())`,
);

/** insertAuditEventRow appends one event; in a transaction it commits with its change. */
export async function insertAuditEventRow(
  target: Db | Prisma.TransactionClient,
  values: AuditEventValues,
): Promise<void> {
  await sqlOf(target).exec(insertAuditEvent, ...values);
}

type Columns<T extends unknown[]> = { [K in keyof T]: T[K][] };

// One array per column, unnested into rows: one statement text (so one name, planned once per
// connection) for any number of events.
const insertAuditEvents = statement<never, Columns<AuditEventValues>>(
  'cubicle_insert_audit_events_v1',
  `INSERT INTO audit_events (id, tenant_id, actor_type, api_key_id, key_prefix, action,
         target_type, target_id, result, status_code, request_id, details, created_at)
   SELECT id, tenant_id, actor_type, api_key_id, key_prefix, action,
          target_type, target_id, result, status_code, request_id, details::jsonb, now()
   FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
               $7::text[], $8::text[], $9::text[], $10::int[], $11::text[], $12::text[])
     AS e(id, tenant_id, actor_type, api_key_id, key_prefix, action,
          target_type, target_id, result, status_code, request_id, details)`,
);

/** insertAuditEventRows appends `rows` in one statement (on the pool: the writer's batches). */
export async function insertAuditEventRows(db: Db, rows: AuditEventValues[]): Promise<void> {
  const columns = Array.from({ length: 12 }, (_, c) => rows.map((r) => r[c]));
  await sqlOf(db).exec(insertAuditEvents, ...(columns as Columns<AuditEventValues>));
}
