import type { AuditEvent as AuditEventView, ListQuery } from '@cubicle/contract/api';
import { newId, type AuditEvent, type Db, type Prisma } from '@cubicle/db';
import { decodeCursor, keysetBefore, page } from './cursor.js';
import { insertAuditEventRow, type AuditEventValues } from './repositories/audit-events.js';

const AUDIT_EVENT_ID = /^aud_[0-9a-hjkmnp-tv-z]{26}$/;
const ACTION = /^[a-z_]+\.[a-z_]+$/;

/** Who did it: an API key, a Cubicle component (e.g. the reclaimer), or an operator's CLI. */
export type AuditActorInput =
  | { type: 'api_key'; apiKeyId: string; keyPrefix: string }
  | { type: 'system'; component: string }
  | { type: 'operator' };

export interface AuditEventInput {
  tenantId: string;
  actor: AuditActorInput;
  /** `resource.verb`, e.g. `pool.apply`, `claim.release`. */
  action: string;
  targetType: string;
  targetId?: string | null;
  result: 'success' | 'failure';
  statusCode?: number | null;
  requestId?: string | null;
  /**
   * Small, non-secret facts (an error code, a release reason). Never request bodies, keys,
   * tokens or secret values: the audit log is readable by every admin of the tenant.
   */
  details?: Record<string, string | number | boolean | null>;
}

/** The columns of one audit row, in INSERT order (shared by the single and batched writers). */
export function auditRow(input: AuditEventInput): { id: string; values: AuditEventValues } {
  if (!ACTION.test(input.action))
    throw new Error(`audit action must be resource.verb: ${input.action}`);
  const { actor } = input;
  const id = newId('audit_event');
  const details = {
    ...input.details,
    ...(actor.type === 'system' ? { component: actor.component } : {}),
  };
  return {
    id,
    values: [
      id,
      input.tenantId,
      actor.type,
      actor.type === 'api_key' ? actor.apiKeyId : null,
      actor.type === 'api_key' ? actor.keyPrefix : null,
      input.action,
      input.targetType,
      input.targetId ?? null,
      input.result,
      input.statusCode ?? null,
      input.requestId ?? null,
      JSON.stringify(details),
    ],
  };
}

/** writeAuditEvent appends one event; `db` may be a transaction so the event commits with its change. */
export async function writeAuditEvent(
  db: Db | Prisma.TransactionClient,
  input: AuditEventInput,
): Promise<string> {
  const { id, values } = auditRow(input);
  await insertAuditEventRow(db, values);
  return id;
}

function actorView(row: AuditEvent): AuditEventView['actor'] {
  const details = (row.details ?? {}) as Record<string, unknown>;
  switch (row.actorType) {
    case 'api_key':
      return { type: 'api_key', api_key_id: row.apiKeyId ?? '', key_prefix: row.keyPrefix ?? '' };
    case 'system':
      return { type: 'system', component: String(details.component ?? 'unknown') };
    default:
      return { type: 'operator' };
  }
}

/** auditEventView maps a row to the contract's AuditEvent. */
export function auditEventView(row: AuditEvent): AuditEventView {
  return {
    id: row.id,
    actor: actorView(row),
    action: row.action,
    target_type: row.targetType,
    target_id: row.targetId,
    result: row.result === 'success' ? 'success' : 'failure',
    status_code: row.statusCode,
    request_id: row.requestId,
    details: (row.details ?? {}) as Record<string, unknown>,
    created_at: row.createdAt.toISOString(),
  };
}

/** listAuditEvents pages through a tenant's events newest first (keyset on created_at, id). */
export async function listAuditEvents(db: Db, tenantId: string, query: ListQuery) {
  const before = query.cursor ? decodeCursor(query.cursor, AUDIT_EVENT_ID) : undefined;
  const rows = await db.auditEvent.findMany({
    where: { tenantId, ...(before ? keysetBefore(before) : {}) },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: query.limit + 1,
  });
  return page(rows, query.limit, auditEventView);
}
