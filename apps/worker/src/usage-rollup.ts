import { pruneClaimScreenshots, rollupUsage, type WorkerDeps } from '@cubicle/control-plane';
import type { JobHandlers } from '@cubicle/queue';

/** The queue the usage rollup runs on: its own, so a long rollup never delays reclaims. */
export const usageQueues = ['usage'];

/**
 * buildUsageHandlers runs the hourly usage rollup. The job is repeatable (scheduled in main.ts)
 * and idempotent: a worker killed mid-rollup commits nothing, and the next run (or BullMQ's
 * stalled-job retry) recomputes the same hours from the facts. The same hourly job bounds the
 * claim screenshots kept for timelines (retention), which needs no schedule of its own.
 */
export function buildUsageHandlers(deps: WorkerDeps): JobHandlers {
  return {
    'usage.rollup': async () => {
      const result = await rollupUsage(deps);
      const screenshotsPruned = await pruneClaimScreenshots(deps.db, deps.now?.() ?? new Date());
      return { ...result, rolledTo: result.rolledTo.toISOString(), screenshotsPruned };
    },
  };
}
