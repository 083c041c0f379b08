import type { WorkerDeps } from '../resources.js';
import { reconcilePool, type ReconcileResult } from './reconcile-pool.js';
import { sweepBackend, type SweepResult } from './sweep-backend.js';
import { checkPrimedDesktops, type PrimedCheckResult } from './check-primed-desktops.js';

/** Pools reconciled at once: each holds a database connection for its transaction. */
const RECONCILE_CONCURRENCY = 8;

export interface ReconcileAllResult {
  pools: number;
  created: number;
  swept: SweepResult[];
  primed: PrimedCheckResult;
}

/**
 * reconcileAll is the periodic safety net over the whole installation: every pool that is
 * active or still has sandboxes is reconciled, a few at a time (pools are independent: each
 * reconcile takes its own pool's lock, so the only shared limit is database connections), then
 * every backend is swept for orphans and lost sandboxes, and warm primed desktops whose primed
 * app died are replaced (checkPrimedDesktops). A pool whose reconcile fails does not
 * stop the others; the first failure is rethrown at the end so the job is marked failed.
 */
export async function reconcileAll(
  deps: WorkerDeps,
  concurrency = RECONCILE_CONCURRENCY,
): Promise<ReconcileAllResult> {
  const pools = await deps.db.pool.findMany({
    where: {
      OR: [{ state: 'active' }, { sandboxes: { some: { state: { notIn: ['deleted'] } } } }],
    },
    select: { id: true, tenantId: true },
  });
  const results: ReconcileResult[] = [];
  let failure: unknown;
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, pools.length) }, async () => {
      while (next < pools.length) {
        const p = pools[next++]!;
        try {
          results.push(await reconcilePool(deps, p.tenantId, p.id));
        } catch (err) {
          failure ??= err;
        }
      }
    }),
  );
  const swept: SweepResult[] = [];
  for (const backend of Object.values(deps.backends))
    if (backend) swept.push(await sweepBackend(deps, backend));
  const primed = await checkPrimedDesktops(deps);
  if (failure) throw failure;
  return {
    pools: pools.length,
    created: results.reduce((n, r) => n + r.created, 0),
    swept,
    primed,
  };
}
