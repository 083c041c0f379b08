import type { Deps } from '../resources.js';
import { claimInclude } from './claim-view.js';
import type { ClaimRow } from '../repositories/claims.js';

/**
 * waitForClaim polls a pending claim until it is no longer pending or the bound passes. Polling
 * the database (rather than an in-process signal) works across API replicas and restarts; the
 * interval grows so a long wait costs few queries.
 */
export async function waitForClaim(
  deps: Deps,
  claimId: string,
  timeoutMs: number,
): Promise<ClaimRow> {
  const deadline = Date.now() + timeoutMs;
  let interval = 25;
  for (;;) {
    const row = await deps.db.claim.findUniqueOrThrow({
      where: { id: claimId },
      include: claimInclude,
    });
    if (row.status !== 'pending' || Date.now() >= deadline) return row;
    await new Promise((r) => setTimeout(r, Math.min(interval, Math.max(1, deadline - Date.now()))));
    interval = Math.min(interval * 2, 250);
  }
}
