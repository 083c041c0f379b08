import { AppError } from '@cubicle/contract/errors';
import type { GuestOperation } from '@cubicle/contract/guest';
import { sqlOf, type Db } from '@cubicle/db';
import { activeHandoffOf } from '../repositories/handoffs.js';

/**
 * The guest operations that change the desktop: while a human holds it (an active handoff) the
 * agent may not make them. Reads (observe, verify, screenshot, files read/list/stat, windows
 * list) still work, so the agent can watch what the human does; a run's stdin and new runs are
 * refused where runs are made (assertNoActiveHandoff).
 */
const DRIVING_OPERATIONS: ReadonlySet<GuestOperation> = new Set<GuestOperation>([
  'act.element',
  'act.pixel',
  'shell.run',
  'shell.kill',
  'files.write',
  'files.delete',
  'windows.launch',
  'windows.close',
]);

/** isDrivingOperation tells whether `operation` is refused while a handoff is active. */
export function isDrivingOperation(operation: string): boolean {
  return DRIVING_OPERATIONS.has(operation as GuestOperation);
}

/** handoffActive is the 409 a driving call gets while a human holds the desktop. */
export function handoffActive(handoffId: string): AppError {
  return new AppError(
    'handoff_active',
    `a human holds this desktop (handoff ${handoffId}); driving calls work again once it is returned or its lease expires`,
    { handoff_id: handoffId },
  );
}

/**
 * refuseDuringHandoff throws 409 `handoff_active` for a driving operation of a claim whose
 * lookup found an active handoff (findLiveGuest reads it in the same statement as the claim).
 */
export function refuseDuringHandoff(handoffId: string | null, operation: string): void {
  if (handoffId && isDrivingOperation(operation)) throw handoffActive(handoffId);
}

/** assertNoActiveHandoff throws 409 `handoff_active` while the claim has an active handoff. */
export async function assertNoActiveHandoff(db: Db, claimId: string): Promise<void> {
  const active = await sqlOf(db).row(activeHandoffOf, claimId);
  if (active) throw handoffActive(active.id);
}
