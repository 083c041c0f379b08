import type { Claim as ClaimView, CreateClaimRequest } from '@cubicle/contract/api';
import { newId, ulid, Prisma, type Pool } from '@cubicle/db';
import { nowOf, type Deps } from '../context.js';
import { claimIdempotencyKey, completeIdempotencyKey, type IdempotencyInput } from '../idempotency/idempotency.js';
import { findLivePool } from '../pools/apply-pool.js';
import { checkQuota } from '@cubicle/tenancy';
import { claimInclude, toClaimView, type ClaimRow } from './claim-view.js';
import { waitForClaim } from './wait-for-claim.js';

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
export async function takeWarmSandbox(tx: Prisma.TransactionClient, pool: Pool, now: Date): Promise<string | null> {
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

function isUniqueViolation(err: unknown): boolean {
  return err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002';
}

async function findLiveByName(deps: Deps, tenantId: string, poolId: string, name: string) {
  return deps.db.claim.findFirst({ where: { tenantId, poolId, name, status: { not: 'released' } }, include: claimInclude });
}

/**
 * createClaim hands out a sandbox of the pool. From a warm sandbox it is one short transaction
 * (201). Otherwise the claim is recorded pending, the pool is asked to provision, and the call
 * waits up to `wait_seconds` for the worker to fulfil it (201) before answering 202 pending.
 * A live claim with the same name comes back as is (200). With an idempotency key, the key and
 * the claim commit together, so a retry returns the same claim even after an API restart.
 */
export async function createClaim(
  deps: Deps,
  tenantId: string,
  poolName: string,
  request: CreateClaimRequest,
  idempotency?: Omit<IdempotencyInput, 'body'>,
): Promise<CreateClaimResult> {
  const pool = await findLivePool(deps, tenantId, poolName);
  if (request.name) {
    const existing = await findLiveByName(deps, tenantId, pool.id, request.name);
    if (existing && !idempotency) return { claim: toClaimView(existing), status: 200 };
  }
  const now = nowOf(deps);
  const ttl = request.ttl_seconds ?? pool.claimTtlSeconds;
  const { expiresAt, maxExpiresAt } = expiryOf(pool, ttl, now);

  let outcome: { row: ClaimRow; status: 200 | 201 | 202; tookWarm: boolean };
  try {
    outcome = await deps.db.$transaction(async (tx) => {
      let idemRowId: string | undefined;
      if (idempotency) {
        const idem = await claimIdempotencyKey(tx, tenantId, { ...idempotency, body: request }, now);
        if (idem.kind === 'replay') {
          const row = await tx.claim.findFirstOrThrow({ where: { id: idem.resourceId, tenantId }, include: claimInclude });
          // A claim first answered 202 that has since become active is reported as created.
          const status = idem.status === 202 && row.status === 'active' ? 201 : (idem.status as 200 | 201 | 202);
          return { row, status, tookWarm: false };
        }
        idemRowId = idem.rowId;
        if (request.name) {
          const existing = await tx.claim.findFirst({ where: { tenantId, poolId: pool.id, name: request.name, status: { not: 'released' } }, include: claimInclude });
          if (existing) {
            await completeIdempotencyKey(tx, idemRowId, 200, existing.id, now);
            return { row: existing, status: 200 as const, tookWarm: false };
          }
        }
      }
      // Unlocked (soft under concurrency: simultaneous claims may pass the count together) so
      // claims of one tenant never queue behind each other on the tenant row; the claim path's
      // latency goal matters more than exactness at the quota's edge.
      await checkQuota(tx, tenantId, 'concurrent_claims', { lock: false });
      const sandboxId = await takeWarmSandbox(tx, pool, now);
      const row = await tx.claim.create({
        data: {
          id: newId('claim'),
          tenantId,
          poolId: pool.id,
          sandboxId,
          name: request.name ?? `c-${ulid(now.getTime())}`,
          status: sandboxId ? 'active' : 'pending',
          metadata: request.metadata,
          ttlSeconds: ttl,
          idleTimeoutSeconds: pool.idleTimeoutSeconds,
          expiresAt,
          maxExpiresAt,
          lastHeartbeatAt: now,
        },
        // The pool's name is known already: only the sandbox is joined on the hot path.
        include: { sandbox: true },
      });
      const status = sandboxId ? 201 : 202;
      if (idemRowId) await completeIdempotencyKey(tx, idemRowId, status, row.id, now);
      return { row: { ...row, pool: { name: pool.name } }, status, tookWarm: sandboxId !== null };
    });
  } catch (err) {
    // Two creates raced on the same live name: the loser reconnects to the winner's claim.
    if (request.name && isUniqueViolation(err)) {
      const existing = await findLiveByName(deps, tenantId, pool.id, request.name);
      if (existing) return { claim: toClaimView(existing), status: 200 };
    }
    throw err;
  }

  if (outcome.tookWarm || outcome.row.status === 'pending') {
    // Refill after taking a warm sandbox; provision (or fulfil) for a pending claim. Not awaited:
    // the claim is already committed, and the periodic sweep reconciles every pool anyway, so a
    // lost nudge only delays a refill by one sweep interval.
    deps.queues.enqueue('pool.reconcile', { tenant_id: tenantId, pool_id: pool.id }).catch(() => undefined);
  }
  if (outcome.row.status === 'pending' && request.wait_seconds > 0) {
    const settled = await waitForClaim(deps, outcome.row.id, request.wait_seconds * 1000);
    if (settled.status === 'active') return { claim: toClaimView(settled), status: 201 };
    return { claim: toClaimView(settled), status: outcome.status };
  }
  return { claim: toClaimView(outcome.row), status: outcome.status };
}
