import type { Prisma, SandboxState } from '@cubicle/db';
import { isSandboxTransition, type SandboxReason } from './states.js';

type Writer = Pick<Prisma.TransactionClient, 'sandbox'>;

export interface SandboxMove {
  /** The sandboxes to move; each moves only if it is still in one of `from`. */
  ids: string | string[];
  from: SandboxState[];
  to: SandboxState;
  reason: SandboxReason;
  /** Other columns written with the state (times, endpoints, failure detail). */
  set?: Omit<Prisma.SandboxUpdateManyMutationInput, 'state' | 'stateReason'>;
  /** A further guard on the rows (e.g. ready before a snapshot was taken). */
  guard?: Omit<Prisma.SandboxWhereInput, 'id' | 'state'>;
}

/**
 * moveSandboxes is the one TypeScript path that changes a sandbox's state: it checks the move
 * against SANDBOX_TRANSITIONS (a move not listed there is a programming error and throws before
 * writing), then writes the state and its reason with a guard on the current state, so a
 * sandbox another process moved first is left alone. Returns how many moved.
 */
export async function moveSandboxes(db: Writer, move: SandboxMove): Promise<number> {
  for (const from of move.from)
    if (!isSandboxTransition(from, move.to, move.reason))
      throw new Error(
        `sandbox ${from} → ${move.to} (${move.reason}) is not a lifecycle transition`,
      );
  const ids = typeof move.ids === 'string' ? [move.ids] : move.ids;
  if (ids.length === 0) return 0;
  const { count } = await db.sandbox.updateMany({
    where: {
      ...move.guard,
      id: ids.length === 1 ? ids[0]! : { in: ids },
      state: move.from.length === 1 ? move.from[0]! : { in: move.from },
    },
    data: { ...move.set, state: move.to, stateReason: move.reason },
  });
  return count;
}

export interface NewSandbox {
  id: string;
  tenantId: string;
  poolId: string;
  backend: Prisma.SandboxCreateManyInput['backend'];
  image: string;
  generation: number;
}

/** createSandboxes records new sandboxes, provisioning, because their pool needs more. */
export async function createSandboxes(db: Writer, sandboxes: NewSandbox[]): Promise<number> {
  if (sandboxes.length === 0) return 0;
  const { count } = await db.sandbox.createMany({
    data: sandboxes.map((s) => ({ ...s, state: 'provisioning', stateReason: 'pool_needs_more' })),
  });
  return count;
}
