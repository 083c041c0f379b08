import { newId } from '@cubicle/db';
import { nowOf } from '../context.js';
import { fulfilPendingClaims } from '../claims/fulfil-claims.js';
import { releaseClaim } from '../claims/manage-claims.js';
import type { WorkerDeps } from '../sandboxes/provision-sandbox.js';
import { CONTROL_PLANE_FAILURES, ControlPlaneFailure } from './failure-reasons.js';
import { planCreate } from './plan-pool.js';

const FAILURE_WINDOW_MS = 60_000;
/** A sandbox provisioning longer than this is considered lost and replaced. */
export const PROVISION_TIMEOUT_MS = 5 * 60_000;

export interface ReconcileResult {
  created: number;
  rolled: number;
  drained: number;
  fulfilled: number;
  timedOut: number;
}

/**
 * reconcilePool brings one pool to its desired shape: a draining pool loses its unclaimed
 * sandboxes and pending claims; warm sandboxes of an older generation are rolled; pending
 * claims get warm sandboxes; new sandboxes are created per planCreate. Runs under a per-pool
 * advisory lock, so concurrent reconciles of one pool never double-create; idempotent.
 */
export async function reconcilePool(
  deps: WorkerDeps,
  tenantId: string,
  poolId: string,
): Promise<ReconcileResult> {
  const result: ReconcileResult = { created: 0, rolled: 0, drained: 0, fulfilled: 0, timedOut: 0 };
  const pool = await deps.db.pool.findFirst({ where: { id: poolId, tenantId } });
  if (!pool) return result;

  if (pool.state === 'draining') {
    const pending = await deps.db.claim.findMany({
      where: { poolId, status: 'pending' },
      select: { id: true },
    });
    for (const c of pending) await releaseClaim(deps, tenantId, c.id, 'pool_deleted');
  } else {
    result.fulfilled = await fulfilPendingClaims(deps, pool);
  }

  await deps.db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`reconcile:${poolId}`}))`;
    const now = nowOf(deps);
    const stale = new Date(now.getTime() - PROVISION_TIMEOUT_MS);
    const timedOut = await tx.sandbox.findMany({
      where: { poolId, state: 'provisioning', createdAt: { lt: stale } },
      select: { id: true },
    });
    if (timedOut.length > 0) {
      await tx.sandbox.updateMany({
        where: { id: { in: timedOut.map((s) => s.id) } },
        data: {
          state: 'failed',
          failureReason: ControlPlaneFailure.provisionTimedOut,
          endedAt: now,
        },
      });
      result.timedOut = timedOut.length;
    }
    // Unclaimed sandboxes that no longer match: all of them when draining, older generations otherwise.
    const retire = await tx.sandbox.findMany({
      where: {
        poolId,
        state: { in: ['warm', 'provisioning'] },
        ...(pool.state === 'draining' ? {} : { generation: { lt: pool.generation } }),
      },
      select: { id: true },
    });
    if (retire.length > 0) {
      await tx.sandbox.updateMany({
        where: { id: { in: retire.map((s) => s.id) }, state: { in: ['warm', 'provisioning'] } },
        data: { state: 'releasing' },
      });
      if (pool.state === 'draining') result.drained = retire.length;
      else result.rolled = retire.length;
    }
    if (pool.state === 'draining') return;

    const groups = await tx.sandbox.groupBy({
      by: ['state'],
      where: { poolId, generation: pool.generation },
      _count: { _all: true },
    });
    const count = (state: string) => groups.find((g) => g.state === state)?._count._all ?? 0;
    // Claimed sandboxes of older generations still take room under max.
    const claimedAll = await tx.sandbox.count({ where: { poolId, state: 'claimed' } });
    const pending = await tx.claim.count({ where: { poolId, status: 'pending' } });
    const tenant = await tx.tenant.findUniqueOrThrow({ where: { id: tenantId } });
    const tenantLive = await tx.sandbox.count({
      where: { tenantId, state: { in: ['provisioning', 'warm', 'claimed', 'releasing'] } },
    });
    // Only the image's own failures pause creation: not a sandbox the control plane lost.
    const recentFailures = await tx.sandbox.count({
      where: {
        poolId,
        failureReason: { not: null, notIn: CONTROL_PLANE_FAILURES },
        endedAt: { gt: new Date(now.getTime() - FAILURE_WINDOW_MS) },
      },
    });
    const create = planCreate({
      min: pool.minSize,
      initial: pool.initialSize,
      max: pool.maxSize,
      provisioning: count('provisioning'),
      warm: count('warm'),
      claimed: claimedAll,
      pending,
      tenantRoom: Math.max(0, tenant.maxSandboxes - tenantLive),
      recentFailures,
    });
    if (create > 0) {
      const ids = Array.from({ length: create }, () => newId('sandbox'));
      await tx.sandbox.createMany({
        data: ids.map((id) => ({
          id,
          tenantId,
          poolId,
          backend: pool.backend,
          image: pool.image,
          generation: pool.generation,
        })),
      });
      result.created = create;
    }
  });
  await enqueueOutstanding(deps, tenantId, poolId);
  return result;
}

/**
 * enqueueOutstanding (re)enqueues a job for every sandbox that is provisioning or being torn
 * down. Job ids are derived from the sandbox id, so BullMQ keeps one job per sandbox; this
 * heals jobs lost when a process died between a commit and its enqueue, and jobs that failed
 * (a finished job of the same id is replaced, not kept blocking the id for 7 days).
 */
export async function enqueueOutstanding(
  deps: WorkerDeps,
  tenantId: string,
  poolId: string,
): Promise<void> {
  const rows = await deps.db.sandbox.findMany({
    where: { poolId, state: { in: ['provisioning', 'releasing', 'failed'] } },
    select: { id: true, state: true },
  });
  for (const row of rows) {
    if (row.state === 'provisioning') {
      await deps.queues.enqueue(
        'sandbox.provision',
        { tenant_id: tenantId, sandbox_id: row.id },
        { jobId: `provision-${row.id}`, isRetryOfFinished: true },
      );
    } else {
      await deps.queues.enqueue(
        'sandbox.destroy',
        { tenant_id: tenantId, sandbox_id: row.id },
        { jobId: `destroy-${row.id}`, isRetryOfFinished: true },
      );
    }
  }
}
