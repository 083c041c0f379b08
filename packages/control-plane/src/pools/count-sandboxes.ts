import type { PoolCounts } from '@cubicle/contract/api';
import type { Db } from '@cubicle/db';
import { emptyCounts } from './pool-view.js';

/** countSandboxes returns live counts per pool id, in one grouped query. */
export async function countSandboxes(db: Db, poolIds: string[]): Promise<Map<string, PoolCounts>> {
  const result = new Map(poolIds.map((id) => [id, emptyCounts()]));
  if (poolIds.length === 0) return result;
  const groups = await db.sandbox.groupBy({
    by: ['poolId', 'state'],
    where: { poolId: { in: poolIds }, state: { not: 'deleted' } },
    _count: { _all: true },
  });
  for (const g of groups) {
    const counts = result.get(g.poolId);
    if (counts && g.state !== 'deleted') counts[g.state] = g._count._all;
  }
  return result;
}
