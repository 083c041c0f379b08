import { createHash } from 'node:crypto';
import { AppError } from '@cubicle/contract/errors';
import { newId, type Prisma } from '@cubicle/db';

/** How long a key is remembered; retries after that are new requests. */
export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;

export interface IdempotencyInput {
  key: string;
  /** Method and route template, e.g. `POST /v1/pools/{name}/claims` plus the path values. */
  scope: string;
  /** The parsed request body; its canonical JSON is hashed. */
  body: unknown;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export function requestHash(body: unknown): string {
  return createHash('sha256').update(canonical(body)).digest('hex');
}

export type IdempotencyClaimResult =
  | { kind: 'new'; rowId: string }
  | { kind: 'replay'; status: number; resourceId: string };

/**
 * claimIdempotencyKey records the key inside the caller's transaction. A concurrent request
 * with the same key blocks on the unique index until the first commits, then sees its row:
 * same body → replay (the same resource), other body → 409 idempotency_key_reused. Nothing
 * is "in progress" across transactions because the key and the resource commit together.
 */
export async function claimIdempotencyKey(
  tx: Prisma.TransactionClient,
  tenantId: string,
  input: IdempotencyInput,
  now: Date,
): Promise<IdempotencyClaimResult> {
  const hash = requestHash(input.body);
  const id = newId('idempotency_key');
  const inserted = await tx.$executeRaw`
    INSERT INTO idempotency_keys (id, tenant_id, key, scope, request_hash, created_at, expires_at)
    VALUES (${id}, ${tenantId}, ${input.key}, ${input.scope}, ${hash}, ${now}, ${new Date(now.getTime() + IDEMPOTENCY_TTL_MS)})
    ON CONFLICT (tenant_id, scope, key) DO NOTHING`;
  if (inserted === 1) return { kind: 'new', rowId: id };
  const row = await tx.idempotencyKey.findUniqueOrThrow({
    where: { tenantId_scope_key: { tenantId, scope: input.scope, key: input.key } },
  });
  if (row.expiresAt <= now) {
    // An expired key is a new request: take the row over.
    await tx.idempotencyKey.update({
      where: { id: row.id },
      data: { requestHash: hash, createdAt: now, expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS), responseStatus: null, resourceId: null, completedAt: null },
    });
    return { kind: 'new', rowId: row.id };
  }
  if (row.requestHash !== hash) {
    throw new AppError('idempotency_key_reused', 'this Idempotency-Key was used with a different request body');
  }
  if (row.responseStatus === null || row.resourceId === null) {
    throw new AppError('idempotency_in_progress', 'a request with this Idempotency-Key is still being processed');
  }
  return { kind: 'replay', status: row.responseStatus, resourceId: row.resourceId };
}

/** completeIdempotencyKey stores the outcome in the same transaction as the resource. */
export async function completeIdempotencyKey(
  tx: Prisma.TransactionClient,
  rowId: string,
  status: number,
  resourceId: string,
  now: Date,
): Promise<void> {
  await tx.idempotencyKey.update({ where: { id: rowId }, data: { responseStatus: status, resourceId, completedAt: now } });
}
