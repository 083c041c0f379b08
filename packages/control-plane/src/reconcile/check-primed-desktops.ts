import type { PrimedWindow } from '@cubicle/contract/api';
import { nowOf, nudgeReconcile } from '../context.js';
import { open } from '../crypto/keyring.js';
import { sandboxGuestClient } from '../guest/guest-client.js';
import { moveSandboxes } from '../lifecycle/sandbox-transitions.js';
import type { WorkerDeps } from '../resources.js';
import { emitWebhookEvent } from '../webhooks/emit-webhook-event.js';
import { sandboxFailedData } from '../webhooks/event-data.js';
import { ControlPlaneFailure } from './failure-reasons.js';

/** Guests asked at once: each is one small call (the window list, a few ms). */
const CHECK_CONCURRENCY = 8;
/** A guest slower than this is left for the next pass (a lost desktop is the sweep's to find). */
const LIST_TIMEOUT_MS = 5_000;

export interface PrimedCheckResult {
  checked: number;
  replaced: number;
}

/**
 * checkPrimedDesktops looks at every warm primed desktop's windows (one `windows.list` through
 * its guest) and fails the desktops where a primed window is gone, so reconcile replaces them
 * and no claim is handed a desktop whose app died. It runs in the periodic sweep (reconcileAll):
 * the claim's hot path stays one SQL statement with no guest call, at the price that a desktop
 * whose app died less than a sweep interval ago can still be taken (the claim then gets the
 * recorded windows, one of them gone). Replacing rather than re-priming in place: a desktop
 * being re-primed would have to leave `warm` meanwhile, which the lifecycle has no way back
 * from, and a fresh desktop is the clean first screen the claim expects.
 *
 * A guest that does not answer is skipped: the backend sweep finds desktops that are gone.
 */
export async function checkPrimedDesktops(
  deps: WorkerDeps,
  concurrency = CHECK_CONCURRENCY,
): Promise<PrimedCheckResult> {
  const readyBefore = nowOf(deps);
  // Only primed ones (primed_windows <> '[]'): an installation of unprimed pools reads no rows.
  const warm = await deps.db.sandbox.findMany({
    where: { state: 'warm', readyAt: { lt: readyBefore }, primedWindows: { not: [] } },
    select: {
      id: true,
      tenantId: true,
      poolId: true,
      guestEndpoint: true,
      guestTokenCiphertext: true,
      primedWindows: true,
    },
  });
  const primed = warm.filter(
    (s) =>
      (s.primedWindows as PrimedWindow[]).length > 0 && s.guestEndpoint && s.guestTokenCiphertext,
  );
  let replaced = 0;
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, primed.length) }, async () => {
      while (next < primed.length) {
        const s = primed[next++]!;
        const expected = s.primedWindows as PrimedWindow[];
        let listed: Set<number>;
        try {
          const guest = sandboxGuestClient(
            s.guestEndpoint!,
            open(deps.keyring, s.guestTokenCiphertext!, s.id),
          );
          const { windows } = await guest.call('windows.list', undefined, {
            timeoutMs: LIST_TIMEOUT_MS,
          });
          listed = new Set(windows.map((w) => w.window_id));
        } catch {
          continue;
        }
        const gone = expected.filter((w) => !listed.has(w.window_id));
        if (gone.length === 0) continue;
        const moved = await moveSandboxes(deps.db, {
          ids: s.id,
          from: ['warm'],
          to: 'failed',
          reason: 'primed_app_exited',
          set: { failureReason: ControlPlaneFailure.primedAppExited, endedAt: nowOf(deps) },
        });
        // Taken by a claim meanwhile (or moved by another pass): not ours to fail.
        if (moved === 0) continue;
        replaced++;
        await emitWebhookEvent(
          deps,
          s.tenantId,
          'sandbox.failed',
          sandboxFailedData(deps.db, s.id, ControlPlaneFailure.primedAppExited),
        );
        await deps.queues.enqueue(
          'sandbox.destroy',
          { tenant_id: s.tenantId, sandbox_id: s.id },
          { jobId: `destroy-${s.id}`, isRetryOfFinished: true },
        );
        void nudgeReconcile(deps, s.tenantId, s.poolId);
      }
    }),
  );
  return { checked: primed.length, replaced };
}
