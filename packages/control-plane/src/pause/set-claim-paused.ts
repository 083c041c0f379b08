import type { Backend } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import type { JobPayload } from '@cubicle/contract/jobs';
import { ulid } from '@cubicle/db';
import { nowOf } from '../context.js';
import {
  markClaimPaused,
  markClaimResumed,
  readPauseTarget,
} from '../repositories/claim-pauses.js';
import { inPgTransaction } from '../repositories/pg-transaction.js';
import { lockForTransaction } from '../repositories/transaction-locks.js';
import type { WorkerDeps } from '../resources.js';
import { emitWebhookEvent } from '../webhooks/emit-webhook-event.js';

export type PausePayload = JobPayload<'claim.pause'>;

/** Why a claim resumed: an explicit call, or transparently before a driving call, viewer or run. */
export type ResumeReason = 'api' | 'drive' | 'viewer' | 'run';

/** What a pause or resume did: whether the claim changed state, and its state now. */
export interface PauseOutcome {
  changed: boolean;
  paused: boolean;
}

/**
 * setClaimPaused pauses or resumes the desktop of a live claim through its backend (local:
 * cgroup freezer; kubevirt: the VMI's pause), idempotently, in one transaction holding the
 * claim's pause lock, so pauses and resumes of one claim from any process (a lane job, a run
 * start, the auto-pause sweep) happen one at a time. The order keeps one invariant — a frozen
 * desktop's claim says paused — so a driving call always knows to thaw it first: a pause writes
 * the row and freezes at once, inside the transaction (a failed freeze rolls the row back; a
 * write or commit that fails thaws again); a resume thaws and writes at once. `idle_pause` pauses only a claim still idle
 * at that moment (the sweep's view may be stale: a call may have come in since).
 */
export async function setClaimPaused(
  deps: WorkerDeps,
  p: PausePayload,
  resumeReason: ResumeReason = 'api',
): Promise<PauseOutcome> {
  const now = nowOf(deps);
  // Set inside the transaction, acted on after it: the webhook once committed, the thaw if not.
  const after: { announce?: () => Promise<unknown>; frozen?: Backend } = {};
  try {
    const outcome = await inPgTransaction(deps.db, async (client) => {
      await lockForTransaction(client, `pause:${p.claim_id}`);
      const t = await readPauseTarget(client, p.tenant_id, p.claim_id, now);
      if (!t || !t.live || t.sandbox_id !== p.sandbox_id)
        throw new AppError('claim_not_active', 'the claim is no longer active');
      const backendKind = t.backend as Backend;
      const backend = deps.backends[backendKind];
      const event = {
        claim_id: p.claim_id,
        pool: t.pool_name,
        pool_id: t.pool_id,
        sandbox_id: p.sandbox_id,
      };
      if (p.action === 'resume') {
        if (!t.paused_at) return { changed: false, paused: false };
        if (!backend?.resume) throw unsupported(backendKind);
        // Thaw and write at once (one wait, not two): a failed thaw rolls the write back; a
        // failed write leaves a running desktop whose claim says paused, which the next driving
        // call resumes again (thawing a running desktop is a no-op).
        const [, marked] = await settledBoth(
          backend.resume(p.sandbox_id),
          markClaimResumed(client, p.claim_id, now),
        );
        const pausedMs = marked ?? 0;
        after.announce = () =>
          emitWebhookEvent(deps, p.tenant_id, 'claim.resumed', {
            ...event,
            reason: resumeReason,
            paused_seconds: pausedMs / 1000,
          });
        return { changed: true, paused: false };
      }
      if (t.paused_at) return { changed: false, paused: true };
      if (p.action === 'idle_pause' && !isStillIdle(t, now))
        return { changed: false, paused: false };
      if (t.handoff_id)
        throw new AppError(
          'handoff_active',
          'a human holds the desktop (handoff); it is not paused',
          {
            handoff_id: t.handoff_id,
          },
        );
      if (!backend?.pause) throw unsupported(backendKind);
      const reason = p.action === 'idle_pause' ? 'idle' : 'api';
      // Write and freeze at once (one wait, not two). Nobody sees the write before the commit,
      // so the invariant is the commit's: a freeze whose write (or commit) fails is thawed below.
      after.frozen = backendKind;
      await settledBoth(
        markClaimPaused(client, p.claim_id, now, `pse_${ulid().toLowerCase()}`, reason),
        backend.pause(p.sandbox_id),
      );
      after.announce = () =>
        emitWebhookEvent(deps, p.tenant_id, 'claim.paused', { ...event, reason });
      return { changed: true, paused: true };
    });
    // Announced after the commit and not awaited (it never throws): the caller's answer does
    // not wait for the outbox, as with claim.activated.
    void after.announce?.();
    return outcome;
  } catch (err) {
    // Frozen but not recorded (the commit failed): thaw, so no call waits on a frozen desktop.
    if (after.frozen)
      await deps.backends[after.frozen]?.resume?.(p.sandbox_id).catch(() => undefined);
    throw err;
  }
}

/**
 * resumePausedClaim thaws a claim a driving call, run or viewer found paused (setClaimPaused's
 * resume, `reason` recorded). A claim that ended meanwhile is left to the caller's own liveness
 * check, which refuses it; any other failure is the caller's.
 */
export async function resumePausedClaim(
  deps: WorkerDeps,
  target: { tenantId: string; claimId: string; sandboxId: string },
  reason: Exclude<ResumeReason, 'api'>,
): Promise<void> {
  await setClaimPaused(
    deps,
    {
      tenant_id: target.tenantId,
      claim_id: target.claimId,
      sandbox_id: target.sandboxId,
      action: 'resume',
    },
    reason,
  ).catch((err: unknown) => {
    if (err instanceof AppError && err.code === 'claim_not_active') return;
    throw err;
  });
}

/**
 * settledBoth waits for both to settle, then answers both values or throws the first failure:
 * a thaw after a failed write must not race a freeze still settling (it would be frozen again).
 */
async function settledBoth<A, B>(a: Promise<A>, b: Promise<B>): Promise<[A, B]> {
  const [ra, rb] = await Promise.allSettled([a, b]);
  if (ra.status === 'rejected') throw ra.reason;
  if (rb.status === 'rejected') throw rb.reason;
  return [ra.value, rb.value];
}

/** isStillIdle re-checks auto-pause's rule at the moment of pausing (see idleClaimRows). */
function isStillIdle(
  t: {
    idle_pause_seconds: number | null;
    idle_since: Date | null;
    busy: boolean;
    handoff_id: string | null;
  },
  now: Date,
): boolean {
  if (t.idle_pause_seconds === null || t.busy || t.handoff_id || !t.idle_since) return false;
  return t.idle_since.getTime() + t.idle_pause_seconds * 1000 <= now.getTime();
}

const unsupported = (backend: Backend) =>
  new AppError(
    'not_supported_by_backend',
    backend === 'kubernetes'
      ? 'a Kubernetes Pod cannot be paused (use the local or kubevirt backend)'
      : `the ${backend} backend cannot pause this sandbox`,
    { backend },
  );
