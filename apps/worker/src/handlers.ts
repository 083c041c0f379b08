import type { Db } from '@cubicle/db';
import type { JobHandlers } from '@cubicle/queue';

export interface WorkerDeps {
  db: Db;
}

/**
 * buildHandlers maps catalog jobs to their implementations. The foundation registers none yet:
 * the control-plane issue adds provisioning, reclaim and guest calls here; jobs without a
 * handler fail as UnrecoverableError rather than sit unprocessed.
 */
export function buildHandlers(_deps: WorkerDeps): JobHandlers {
  return {};
}

/** The queues this worker listens on (per-sandbox guest queues are added as sandboxes appear). */
export const staticQueues = ['sandboxes', 'claims', 'reclaim', 'reconcile', 'runs'];
