import {
  deliverWhenActive,
  destroySandbox,
  provisionSandbox,
  reclaimClaims,
  reconcilePool,
  sweepBackend,
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
    'sandbox.destroy': (p) => destroySandbox(deps, p.sandbox_id),
    'secrets.deliver': (p) => deliverWhenActive(deps, p),
    'pool.reconcile': (p) => reconcilePool(deps, p.tenant_id, p.pool_id),
    'claims.reclaim': async () => {
      const released = await reclaimClaims(deps);
      const now = Date.now();
      for (const r of released) metrics?.recordReclaim(r.reason, (now - r.dueAt.getTime()) / 1000);
      return { released: released.length };
    },
    'pools.sweep': async () => {
      const pools = await deps.db.pool.findMany({
        where: {
          OR: [{ state: 'active' }, { sandboxes: { some: { state: { notIn: ['deleted'] } } } }],
        },
        select: { id: true, tenantId: true },
      });
      for (const p of pools) await reconcilePool(deps, p.tenantId, p.id);
      const swept = [];
      for (const backend of Object.values(deps.backends))
        if (backend) swept.push(await sweepBackend(deps, backend));
      return { pools: pools.length, swept };
    },
  };
}

/** The fixed queues this worker listens on; per-sandbox `guest-<id>` queues are run by GuestQueues. */
export const staticQueues = ['sandboxes', 'reclaim', 'reconcile', 'runs', 'webhooks', 'secrets'];
