import { newId } from '@cubicle/db';
import { nowOf } from '../context.js';
import { fulfilPendingClaims } from '../claims/fulfil-claims.js';
import { releaseClaim } from '../claims/manage-claims.js';
import type { WorkerDeps } from '../resources.js';
import { ControlPlaneFailure } from './failure-reasons.js';
import { readPoolState, type PoolForReconcile, type PoolState } from './read-pool-state.js';
import { planCreate } from './plan-pool.js';
import { createSandboxes, moveSandboxes } from '../lifecycle/sandbox-transitions.js';
import { lockForTransaction } from '../repositories/transaction-locks.js';

export { PROVISION_TIMEOUT_MS } from './read-pool-state.js';

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
  // A look before the work. Most reconciles find nothing to do: every claim nudges its pool
  // (at most every 500 ms per API), and a pool kept at its maximum, or refilled already, has
  // no claim waiting, nothing to retire, create or (re)enqueue. Such a reconcile was two
  // transactions and eight ORM statements; now it is this one plain read (bench:scale: ~1.5 ms
  // of worker CPU a claim went to reconciles that changed nothing). The read takes no lock:
  // whatever changes after it nudges the pool again, as it would after the full pass.
  const look = await readPoolState(deps.db, tenantId, poolId, nowOf(deps));
  if (!look || (look.pool.state !== 'draining' && isSettled(look.pool, look))) return result;
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
    await lockForTransaction(tx, `reconcile:${poolId}`);
    const now = nowOf(deps);
    const state = await readPoolState(tx, tenantId, poolId, now);
    if (!state) return;
    const { timedOut, retire, snapshot } = state;
    if (timedOut.length > 0) {
      result.timedOut = await moveSandboxes(tx, {
        ids: timedOut,
        from: ['provisioning'],
        to: 'failed',
        reason: 'provision_timeout',
        set: { failureReason: ControlPlaneFailure.provisionTimedOut, endedAt: now },
      });
    }
    if (retire.length > 0) {
      await moveSandboxes(tx, {
        ids: retire,
        from: ['warm', 'provisioning'],
        to: 'releasing',
        reason: pool.state === 'draining' ? 'pool_drained' : 'generation_rolled',
      });
      if (pool.state === 'draining') result.drained = retire.length;
      else result.rolled = retire.length;
    }
    if (pool.state === 'draining') return;
    const create = planCreate({
      min: pool.minSize,
      initial: pool.initialSize,
      max: pool.maxSize,
      ...snapshot,
    });
    if (create > 0) {
      await createSandboxes(
        tx,
        Array.from({ length: create }, () => ({
          id: newId('sandbox'),
          tenantId,
          poolId,
          backend: pool.backend,
          image: pool.image,
          generation: pool.generation,
        })),
      );
      result.created = create;
    }
  });
  await enqueueOutstanding(deps, tenantId, poolId);
  return result;
}

/**
 * isSettled: a pool with nothing for reconcile to do: no claim waiting, nothing timed out or to
 * retire, nothing to create by planCreate, and no sandbox whose job would be re-enqueued.
 */
export function isSettled(pool: PoolForReconcile, state: PoolState): boolean {
  const { timedOut, retire, snapshot, outstanding } = state;
  if (timedOut.length > 0 || retire.length > 0 || snapshot.pending > 0 || outstanding > 0)
    return false;
  return (
    planCreate({ min: pool.minSize, initial: pool.initialSize, max: pool.maxSize, ...snapshot }) ===
    0
  );
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
