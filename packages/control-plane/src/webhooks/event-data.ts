import type { WebhookEventDataOf } from '@cubicle/contract/api';
import type { Db, Prisma } from '@cubicle/db';

type Reader = Db | Prisma.TransactionClient;

async function readClaim(db: Reader, claimId: string) {
  return db.claim.findUnique({
    where: { id: claimId },
    select: {
      id: true,
      name: true,
      poolId: true,
      sandboxId: true,
      metadata: true,
      releaseReason: true,
      pool: { select: { name: true } },
    },
  });
}

/**
 * claimActivatedData reads what `claim.activated` says about a claim (as the reader sees it:
 * inside a transaction, its uncommitted state); null when the claim has no sandbox.
 */
export function claimActivatedData(db: Reader, claimId: string) {
  return async (): Promise<WebhookEventDataOf<'claim.activated'> | null> => {
    const c = await readClaim(db, claimId);
    if (!c?.sandboxId) return null;
    return {
      claim_id: c.id,
      name: c.name,
      pool: c.pool.name,
      pool_id: c.poolId,
      sandbox_id: c.sandboxId,
      metadata: c.metadata as Record<string, string>,
    };
  };
}

/** sandboxFailedData reads what `sandbox.failed` says about a sandbox. */
export function sandboxFailedData(db: Reader, sandboxId: string, reason: string) {
  return async (): Promise<WebhookEventDataOf<'sandbox.failed'> | null> => {
    const s = await db.sandbox.findUnique({
      where: { id: sandboxId },
      select: { id: true, poolId: true, failureReason: true, pool: { select: { name: true } } },
    });
    if (!s) return null;
    return {
      sandbox_id: s.id,
      pool: s.pool.name,
      pool_id: s.poolId,
      reason: s.failureReason ?? reason,
    };
  };
}
