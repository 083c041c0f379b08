import type { PoolKubernetes } from '@cubicle/contract/api';
import type { Backends } from '../backend/types.js';
import { nowOf, nudgeReconcile, type Deps } from '../context.js';
import { seal, type Keyring } from '../crypto/keyring.js';
import { fulfilPendingClaims } from '../claims/fulfil-claims.js';

export interface WorkerDeps extends Deps {
  backends: Backends;
  keyring: Keyring;
}

/**
 * provisionSandbox brings a provisioning sandbox up on its backend and marks it warm, then hands
 * it to a pending claim if one waits. Idempotent and safe to re-run after a crash: a sandbox
 * that is no longer provisioning is left alone, and if it was released while starting, what was
 * started is destroyed again. A failure marks it failed; reconcile replaces it.
 */
export async function provisionSandbox(
  deps: WorkerDeps,
  sandboxId: string,
  signal: AbortSignal,
): Promise<'warm' | 'skipped' | 'failed'> {
  const sandbox = await deps.db.sandbox.findUnique({
    where: { id: sandboxId },
    include: { pool: true },
  });
  if (!sandbox || sandbox.state !== 'provisioning') return 'skipped';
  const backend = deps.backends[sandbox.backend];
  try {
    if (!backend) throw new Error(`backend ${sandbox.backend} is not configured in this worker`);
    const up = await backend.provision({
      sandboxId,
      tenantId: sandbox.tenantId,
      poolId: sandbox.poolId,
      image: sandbox.image,
      cpuMillis: sandbox.pool.cpuMillis,
      memoryMb: sandbox.pool.memoryMb,
      env: sandbox.pool.env as Record<string, string>,
      kubernetes: sandbox.pool.kubernetes as PoolKubernetes,
      signal,
    });
    const { count } = await deps.db.sandbox.updateMany({
      where: { id: sandboxId, state: 'provisioning' },
      data: {
        state: 'warm',
        backendRef: up.ref,
        guestEndpoint: up.guestUrl,
        vncEndpoint: up.vncEndpoint,
        guestTokenCiphertext: seal(deps.keyring, up.guestToken, sandboxId),
        readyAt: nowOf(deps),
      },
    });
    if (count === 0) {
      await backend.destroy(sandboxId);
      return 'skipped';
    }
  } catch (err) {
    const reason = err instanceof Error ? err.message.slice(0, 500) : 'provisioning failed';
    await deps.db.sandbox.updateMany({
      where: { id: sandboxId, state: 'provisioning' },
      data: { state: 'failed', failureReason: reason, endedAt: nowOf(deps) },
    });
    await deps.queues.enqueue(
      'sandbox.destroy',
      { tenant_id: sandbox.tenantId, sandbox_id: sandboxId },
      { jobId: `destroy-${sandboxId}` },
    );
    await nudgeReconcile(deps, sandbox.tenantId, sandbox.poolId);
    return 'failed';
  }
  await fulfilPendingClaims(deps, sandbox.pool);
  return 'warm';
}

/**
 * destroySandbox tears a releasing or failed sandbox down and marks it deleted. Idempotent: the
 * backend treats "already gone" as success, and a deleted sandbox is left alone.
 */
export async function destroySandbox(
  deps: WorkerDeps,
  sandboxId: string,
): Promise<'deleted' | 'skipped'> {
  const sandbox = await deps.db.sandbox.findUnique({ where: { id: sandboxId } });
  if (!sandbox || sandbox.state === 'deleted') return 'skipped';
  if (sandbox.state !== 'releasing' && sandbox.state !== 'failed') return 'skipped';
  const backend = deps.backends[sandbox.backend];
  if (!backend) throw new Error(`backend ${sandbox.backend} is not configured in this worker`);
  await backend.destroy(sandboxId);
  await deps.db.sandbox.updateMany({
    where: { id: sandboxId, state: { in: ['releasing', 'failed'] } },
    data: { state: 'deleted', endedAt: sandbox.endedAt ?? nowOf(deps) },
  });
  return 'deleted';
}
