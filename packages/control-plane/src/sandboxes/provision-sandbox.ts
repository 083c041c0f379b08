import type { PoolKubernetes, PoolPrime, PrimedWindow } from '@cubicle/contract/api';
import type { SandboxReason } from '../lifecycle/states.js';
import { sandboxGuestClient } from '../guest/guest-client.js';
import { PrimeFailure, primeDesktop } from './prime-desktop.js';
import type { ProvisionedSandbox } from '../backend/types.js';
import { untilReachable } from './until-reachable.js';
import { nowOf, nudgeReconcile } from '../context.js';
import type { Resources, WorkerDeps } from '../resources.js';
import { flushRecording } from '../recordings/flush-recording.js';
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
 * failed; reconcile replaces it. A pool with `prime` has its apps opened (primeDesktop) once
 * the desktop is up and before it turns warm: a desktop counts as warm only when primed, and
 * one that cannot be primed fails with the reason (`prime failed: …`) and is replaced.
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
    await failProvisioning(deps, sandbox, reason, 'provision_failed', signal);
    return 'failed';
  }
  let primedWindows: PrimedWindow[] = [];
  const prime = sandbox.pool.prime as PoolPrime | null;
  if (prime) {
    try {
      primedWindows = await primeDesktop(
        sandboxGuestClient(up.guestUrl, up.guestToken),
        prime,
        signal,
      );
    } catch (err) {
      if (!(err instanceof PrimeFailure)) throw err;
      // Failed before it was recorded warm: its endpoint is not stored, destroy finds it by id.
      await failProvisioning(deps, sandbox, err.message, 'prime_failed', signal);
      return 'failed';
    }
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
        primedWindows,
        ...(up.egressLink === undefined ? {} : { egressLink: up.egressLink }),
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
 * failProvisioning marks a provisioning sandbox failed with its reason, the `sandbox.failed`
 * webhook in the same transaction (once: the state guard), and has it destroyed; reconcile
 * replaces it. Retried while the database or Redis is away: the desktop may be running.
 */
async function failProvisioning(
  deps: WorkerDeps,
  sandbox: { id: string; tenantId: string; poolId: string },
  reason: string,
  stateReason: Extract<SandboxReason, 'provision_failed' | 'prime_failed'>,
  signal: AbortSignal,
): Promise<void> {
  const sandboxId = sandbox.id;
  await untilReachable(signal, async () => {
    await deps.db.$transaction(async (tx) => {
      const failed = await moveSandboxes(tx, {
        ids: sandboxId,
        from: ['provisioning'],
        to: 'failed',
        reason: stateReason,
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
}

/**
 * destroySandbox tears a releasing or failed sandbox down and marks it deleted. Idempotent: the
 * backend treats "already gone" as success, and a deleted sandbox is left alone. Its pool is
 * nudged once it is gone: a releasing sandbox still counts against the tenant's max_sandboxes,
 * so a tenant at that quota gets its replacement only now, not at the next periodic sweep.
 * OOM kills since the last sweep are reported first: destroy takes the counters with it.
 */
export async function destroySandbox(
  deps: WorkerDeps & Partial<Pick<Resources, 'objects'>>,
  sandboxId: string,
): Promise<'deleted' | 'skipped'> {
  const sandbox = await deps.db.sandbox.findUnique({ where: { id: sandboxId } });
  if (!sandbox || sandbox.state === 'deleted') return 'skipped';
  if (sandbox.state !== 'releasing' && sandbox.state !== 'failed') return 'skipped';
  const backend = deps.backends[sandbox.backend];
  if (!backend) throw new Error(`backend ${sandbox.backend} is not configured in this worker`);
  await reportOomKills(deps, sandboxId, await readResources(backend, sandboxId));
  // A recorded claim's last segment is closed and stored while its desktop still exists.
  if (deps.objects) await flushRecording({ ...deps, objects: deps.objects }, sandboxId);
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
