import type { Claim as ClaimView, CreateClaimRequest } from '@cubicle/contract/api';
import { newId, ulid, Prisma, type Pool } from '@cubicle/db';
import { nowOf, nudgeReconcile, type Deps } from '../context.js';
import {
  IDEMPOTENCY_TTL_MS,
  requestHash,
  type IdempotencyInput,
} from '../idempotency/idempotency.js';
import { AppError } from '@cubicle/contract/errors';
import { ClaimStatementError, insertClaim, type InsertClaimInput } from './insert-claim.js';
import { claimFromJson, sandboxFromJson } from './rows-from-json.js';
import { findLivePool } from '../pools/apply-pool.js';
import { claimInclude, toClaimView, type ClaimRow } from './claim-view.js';
import { waitForClaim } from './wait-for-claim.js';
import { emitWebhookEvent } from '../webhooks/emit-webhook-event.js';

export interface CreateClaimResult {
  claim: ClaimView;
  /** 201: active (new); 202: pending; 200: an existing live claim of that name (reconnect). */
  status: 200 | 201 | 202;
}

/** expiryOf computes a claim's deadlines from its TTL, capped by the pool's maximum lifetime. */
export function expiryOf(pool: Pool, ttlSeconds: number, now: Date) {
  const maxExpiresAt = new Date(now.getTime() + pool.maxClaimLifetimeSeconds * 1000);
  const expiresAt = new Date(Math.min(now.getTime() + ttlSeconds * 1000, maxExpiresAt.getTime()));
  return { expiresAt, maxExpiresAt };
}

/**
 * takeWarmSandbox marks the oldest warm sandbox of the pool's current generation claimed and
 * returns its id. SKIP LOCKED lets concurrent claims each take a different sandbox without
 * waiting on one another; the state check in the UPDATE makes a double claim impossible.
 */
export async function takeWarmSandbox(
  tx: Prisma.TransactionClient,
  pool: Pool,
  now: Date,
): Promise<string | null> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    UPDATE sandboxes SET state = 'claimed', claimed_at = ${now}, updated_at = ${now}
    WHERE id = (
      SELECT id FROM sandboxes
      WHERE pool_id = ${pool.id} AND state = 'warm' AND generation = ${pool.generation}
      ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED
    ) AND state = 'warm'
    RETURNING id`;
  return rows[0]?.id ?? null;
}

async function findLiveByName(deps: Deps, tenantId: string, poolId: string, name: string) {
  return deps.db.claim.findFirst({
    where: { tenantId, poolId, name, status: { not: 'released' } },
    include: claimInclude,
  });
}

/**
 * createClaim hands out a sandbox of the pool. From a warm sandbox it is one SQL statement
 * (insertClaim: 201). Otherwise the claim is recorded pending, the pool is asked to provision,
 * and the call waits up to `wait_seconds` for the worker to fulfil it (201) before answering 202
 * pending. A live claim with the same name comes back as is (200). With an idempotency key, the
 * key and the claim commit together, so a retry returns the same claim even after an API
 * restart; the same key with another body is 409.
 */
export async function createClaim(
  deps: Deps,
  tenantId: string,
  poolName: string,
  request: CreateClaimRequest,
  idempotency?: Omit<IdempotencyInput, 'body'>,
): Promise<CreateClaimResult> {
  const now = nowOf(deps);
  const hash = idempotency ? requestHash(request) : '';
  const input: InsertClaimInput = {
    claimId: newId('claim'),
    tenantId,
    poolName,
    name: request.name ?? `c-${ulid(now.getTime())}`,
    metadata: request.metadata,
    ttlSeconds: request.ttl_seconds ?? null,
    now,
    ...(idempotency
      ? {
          idempotency: {
            rowId: newId('idempotency_key'),
            key: idempotency.key,
            scope: idempotency.scope,
            requestHash: hash,
            expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
          },
        }
      : {}),
  };

  let inserted: Awaited<ReturnType<typeof insertClaim>>;
  try {
    inserted = await insertClaim(deps.db, input);
  } catch (err) {
    const constraint = uniqueViolation(err);
    if (constraint === 'idempotency_keys_tenant_id_scope_key_key' && idempotency) {
      return replayIdempotent(deps, tenantId, idempotency, hash, now, () =>
        createClaim(deps, tenantId, poolName, request, idempotency),
      );
    }
    if (constraint === 'claims_live_name_key' && request.name) {
      // A live claim has this name: this call is a reconnect to it, unless its key was already
      // used: the key decides first (same body → its first answer, another body → 409), as if
      // the key's row had been checked before the name's.
      const again = () => createClaim(deps, tenantId, poolName, request, idempotency);
      const name = request.name;
      const reconnect = async (): Promise<CreateClaimResult> => {
        const pool = await findLivePool(deps, tenantId, poolName);
        const existing = await findLiveByName(deps, tenantId, pool.id, name);
        if (!existing) return again(); // it ended meanwhile: the name is free again
        if (
          idempotency &&
          !(await recordIdempotentReconnect(deps, tenantId, idempotency, hash, existing.id, now))
        )
          return replayIdempotent(deps, tenantId, idempotency, hash, now, again);
        return { claim: toClaimView(existing), status: 200 };
      };
      return idempotency
        ? replayIdempotent(deps, tenantId, idempotency, hash, now, reconnect)
        : reconnect();
    }
    // A data exception (class 22) is this request's own input that Postgres cannot store; the
    // contract refuses such strings first, so this is a second line, not the usual path.
    if (err instanceof ClaimStatementError && err.code.startsWith('22'))
      throw new AppError('validation_failed', 'the claim cannot be stored', {
        issues: [
          { location: 'body', path: 'metadata', code: 'invalid_string', message: err.message },
        ],
      });
    throw err;
  }
  if (!inserted.poolFound || !inserted.poolId)
    throw new AppError('not_found', `pool ${poolName} not found`);
  if (!inserted.quotaOk || !inserted.claim) {
    throw new AppError(
      'quota_exceeded',
      `the tenant's concurrent_claims quota (${inserted.limit}) is reached`,
      {
        quota: 'concurrent_claims',
        limit: inserted.limit,
        used: inserted.used,
      },
    );
  }
  const claim = claimFromJson(inserted.claim);
  const row: ClaimRow = {
    ...claim,
    pool: { name: poolName },
    sandbox: inserted.sandbox ? sandboxFromJson(inserted.sandbox) : null,
  };
  const poolId = inserted.poolId;

  // Refill after taking a warm sandbox; provision (or fulfil) for a pending claim. Not awaited:
  // the claim is committed, and a lost nudge only delays a refill by one sweep interval.
  void nudgeReconcile(deps, tenantId, poolId);
  // A claim that took a warm sandbox is active now (a pending one is announced when fulfilled).
  // Not awaited, and outside the claim's statement: the hot path stays one round trip; the
  // event is lost only if this process dies in the next few milliseconds.
  // Lazy data: a tenant without a subscribed endpoint costs one EXISTS probe, no ids or body.
  const sandboxId = row.sandboxId;
  if (row.status === 'active' && sandboxId)
    void emitWebhookEvent(deps, tenantId, 'claim.activated', async () => ({
      claim_id: row.id,
      name: row.name,
      pool: poolName,
      pool_id: poolId,
      sandbox_id: sandboxId,
      metadata: row.metadata as Record<string, string>,
    }));

  if (row.status === 'pending' && request.wait_seconds > 0) {
    const settled = await waitForClaim(deps, row.id, request.wait_seconds * 1000);
    return { claim: toClaimView(settled), status: settled.status === 'active' ? 201 : 202 };
  }
  return { claim: toClaimView(row), status: row.status === 'active' ? 201 : 202 };
}

/** uniqueViolation names the unique constraint a failed statement hit, if that is why it failed. */
function uniqueViolation(err: unknown): string | null {
  // node-postgres (the claim statement) reports SQLSTATE and constraint; Prisma wraps them.
  const pgError = err as { code?: unknown; constraint?: unknown } | null;
  let text: string;
  if (pgError && pgError.code === '23505') text = String(pgError.constraint ?? '');
  else if (err instanceof Prisma.PrismaClientKnownRequestError) {
    text = `${err.message} ${JSON.stringify(err.meta ?? {})}`;
    if (!/23505|unique constraint|P2002/i.test(`${err.code} ${text}`)) return null;
  } else return null;
  for (const name of ['idempotency_keys_tenant_id_scope_key_key', 'claims_live_name_key'])
    if (text.includes(name)) return name;
  return 'unknown';
}

/**
 * replayIdempotent answers a request whose key was already used: same body → the same claim
 * (with its first status, or 201 once a pending claim became active); other body → 409. An
 * expired key is forgotten and the request runs as new, once.
 */
async function replayIdempotent(
  deps: Deps,
  tenantId: string,
  idempotency: Omit<IdempotencyInput, 'body'>,
  hash: string,
  now: Date,
  runAgain: () => Promise<CreateClaimResult>,
): Promise<CreateClaimResult> {
  const key = await deps.db.idempotencyKey.findUnique({
    where: { tenantId_scope_key: { tenantId, scope: idempotency.scope, key: idempotency.key } },
  });
  if (!key) return runAgain();
  if (key.expiresAt <= now) {
    await deps.db.idempotencyKey.deleteMany({ where: { id: key.id, expiresAt: { lte: now } } });
    return runAgain();
  }
  if (key.requestHash !== hash)
    throw new AppError(
      'idempotency_key_reused',
      'this Idempotency-Key was used with a different request body',
    );
  if (key.responseStatus === null || key.resourceId === null) {
    throw new AppError(
      'idempotency_in_progress',
      'a request with this Idempotency-Key is still being processed',
    );
  }
  const row = await deps.db.claim.findFirstOrThrow({
    where: { id: key.resourceId, tenantId },
    include: claimInclude,
  });
  const status =
    key.responseStatus === 202 && row.status === 'active'
      ? 201
      : (key.responseStatus as 200 | 201 | 202);
  return { claim: toClaimView(row), status };
}

/**
 * recordIdempotentReconnect remembers that this key answered with an existing claim (200). False
 * when a concurrent request took the key first: then that request's record decides the answer.
 */
async function recordIdempotentReconnect(
  deps: Deps,
  tenantId: string,
  idempotency: Omit<IdempotencyInput, 'body'>,
  hash: string,
  claimId: string,
  now: Date,
): Promise<boolean> {
  const written = await deps.db.$executeRaw`
    INSERT INTO idempotency_keys (id, tenant_id, key, scope, request_hash, response_status, resource_id, created_at, completed_at, expires_at)
    VALUES (${newId('idempotency_key')}, ${tenantId}, ${idempotency.key}, ${idempotency.scope}, ${hash}, 200, ${claimId}, ${now}, ${now}, ${new Date(now.getTime() + IDEMPOTENCY_TTL_MS)})
    ON CONFLICT (tenant_id, scope, key) DO NOTHING`;
  return written === 1;
}
