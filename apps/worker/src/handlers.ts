import {
  destroySandboxSavingProfile,
  expireHandoffs,
  hasObjects,
  pauseIdleClaims,
  provisionSandbox,
  reclaimClaims,
  reconcileAll,
  reconcilePool,
  sweepProfiles,
  sweepSnapshots,
  type RunSupervisor,
  type WorkerDeps,
} from '@cubicle/control-plane';
import type { JobHandlers } from '@cubicle/queue';
import type { WorkerMetrics } from './metrics.js';

/**
 * buildHandlers maps catalog jobs to control-plane services. Handlers are thin: every decision
 * lives in @cubicle/control-plane, and every handler is idempotent because BullMQ may run a job
 * again after a worker dies mid-job (stalled-job recovery).
 */
export function buildHandlers(
  deps: WorkerDeps,
  metrics?: WorkerMetrics,
  runs?: RunSupervisor,
): JobHandlers {
  return {
    ...(runs ? { 'run.execute': (p) => runs.execute(p.tenant_id, p.run_id) } : {}),
    'sandbox.provision': (p, ctx) => provisionSandbox(deps, p.sandbox_id, ctx.signal),
    // A released claim's profile is saved before its desktop goes.
    'sandbox.destroy': (p) => destroySandboxSavingProfile(deps, p.sandbox_id),
    'pool.reconcile': (p) => reconcilePool(deps, p.tenant_id, p.pool_id),
    'claims.reclaim': async () => {
      const released = await reclaimClaims(deps);
      const now = Date.now();
      for (const r of released) metrics?.recordReclaim(r.reason, (now - r.dueAt.getTime()) / 1000);
      // Handoffs whose lease ran out (or whose claim ended) give control back in the same sweep.
      const handoffs = await expireHandoffs(deps);
      // Auto-pause: claims idle for their pool's idle_pause_seconds get a pause on their lane.
      const paused = await pauseIdleClaims(deps);
      return { released: released.length, handoffs_ended: handoffs.length, idle_paused: paused };
    },
    'pools.sweep': async () => {
      const { pools, swept, primed } = await reconcileAll(deps);
      // Profiles unused past their tenant's retention go in the same periodic sweep.
      const profilesDeleted = hasObjects(deps) ? await sweepProfiles(deps) : 0;
      // Snapshots past their tenant's retention (and half-made ones) go in it too.
      const snapshotsDeleted = await sweepSnapshots(deps);
      return {
        pools,
        swept,
        primed,
        profiles_deleted: profilesDeleted,
        snapshots_deleted: snapshotsDeleted,
      };
    },
  };
}

/** The fixed queues this worker listens on; per-sandbox `guest-<id>` queues are run by GuestQueues. */
export const staticQueues = ['sandboxes', 'reclaim', 'reconcile', 'runs', 'webhooks'];
