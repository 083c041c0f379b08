import type { Db } from '@cubicle/db';

/**
 * snapshotBytesUsed is what the tenant's snapshots take in the store (every status: a snapshot
 * being made holds its objects too), leaving out `except` (the one being made, counted apart).
 */
export async function snapshotBytesUsed(
  db: Db,
  tenantId: string,
  except?: string,
): Promise<number> {
  const sum = await db.snapshot.aggregate({
    where: { tenantId, ...(except ? { id: { not: except } } : {}) },
    _sum: { storedBytes: true },
  });
  return Number(sum._sum.storedBytes ?? 0n);
}
