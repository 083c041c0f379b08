import type { PoolKubernetes } from '@cubicle/contract/api';
import type { ProvisionedSandbox } from '../backend/types.js';
import { untilReachable } from './until-reachable.js';
import { nowOf, nudgeReconcile } from '../context.js';
import type { WorkerDeps } from '../resources.js';
import { seal } from '../crypto/keyring.js';
import { fulfilPendingClaims } from '../claims/fulfil-claims.js';
import { sandboxFailedData } from '../webhooks/event-data.js';
import { recordWebhookEvent } from '../webhooks/emit-webhook-event.js';
import { moveSandboxes } from '../lifecycle/sandbox-transitions.js';
import { readResources, reportOomKills } from './report-oom-kills.js';

/**
 * provisionSandbox brings a provisioning sandbox up on its backend and marks it warm, then hands
 * it to a pending claim if one waits. Idempotent and safe to re-run after a crash: a sandbox
 * that is no longer provisioning is left alone, and if it was released while starting, what was
 * started is destroyed again. A failure of the backend (the image's own failure) marks it
 * failed; reconcile replaces it.
 *
 * The database or Redis being unreachable is not the sandbox's failure: before the backend is
 * asked, the error goes to the queue, which runs the job again later without spending an
 * attempt; once a desktop runs, its record is retried until the database is back (the job's
 * timeout bounds it), so the desktop is adopted rather than left unaccounted.
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
  let up: ProvisionedSandbox;
  try {
    if (!backend) throw new Error(`backend ${sandbox.backend} is not configured in this worker`);
    up = await backend.provision({
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
  } catch (err) {
    const reason = err instanceof Error ? err.message.slice(0, 500) : 'provisioning failed';
    await untilReachable(signal, async () => {
      // The failure and its `sandbox.failed` webhook commit together (once: the state guard).
      await deps.db.$transaction(async (tx) => {
        const failed = await moveSandboxes(tx, {
          ids: sandboxId,
          from: ['provisioning'],
          to: 'failed',
          reason: 'provision_failed',
          set: { failureReason: reason, endedAt: nowOf(deps) },
        });
        if (failed > 0)
          await recordWebhookEvent(
            tx,
            sandbox.tenantId,
            'sandbox.failed',
            sandboxFailedData(tx, sandboxId, reason),
          );
      });
      await deps.queues.enqueue(
        'sandbox.destroy',
        { tenant_id: sandbox.tenantId, sandbox_id: sandboxId },
        { jobId: `destroy-${sandboxId}`, isRetryOfFinished: true },
      );
      void nudgeReconcile(deps, sandbox.tenantId, sandbox.poolId);
    });
    return 'failed';
  }
  const count = await untilReachable(signal, () =>
    moveSandboxes(deps.db, {
      ids: sandboxId,
      from: ['provisioning'],
      to: 'warm',
      reason: 'ready',
      set: {
        backendRef: up.ref,
        guestEndpoint: up.guestUrl,
        vncEndpoint: up.vncEndpoint,
        guestTokenCiphertext: seal(deps.keyring, up.guestToken, sandboxId),
        readyAt: nowOf(deps),
      },
    }),
  );
  if (count === 0) {
    await backend!.destroy(sandboxId);
    return 'skipped';
  }
  await untilReachable(signal, () => fulfilPendingClaims(deps, sandbox.pool));
  return 'warm';
}

/**
 * destroySandbox tears a releasing or failed sandbox down and marks it deleted. Idempotent: the
 * backend treats "already gone" as success, and a deleted sandbox is left alone. Its pool is
 * nudged once it is gone: a releasing sandbox still counts against the tenant's max_sandboxes,
 * so a tenant at that quota gets its replacement only now, not at the next periodic sweep.
 * OOM kills since the last sweep are reported first: destroy takes the counters with it.
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
  await reportOomKills(deps, sandboxId, await readResources(backend, sandboxId));
  await backend.destroy(sandboxId);
  await moveSandboxes(deps.db, {
    ids: sandboxId,
    from: ['releasing', 'failed'],
    to: 'deleted',
    reason: 'destroyed',
    set: { endedAt: sandbox.endedAt ?? nowOf(deps) },
  });
  void nudgeReconcile(deps, sandbox.tenantId, sandbox.poolId);
  return 'deleted';
}
