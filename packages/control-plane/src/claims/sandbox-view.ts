import type { Sandbox as SandboxView } from '@cubicle/contract/api';
import type { Sandbox } from '@cubicle/db';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** toSandboxView renders a sandbox row for the API; backend handles and tokens never leave. */
export function toSandboxView(row: Sandbox, poolName: string): SandboxView {
  return {
    id: row.id,
    pool_id: row.poolId,
    pool: poolName,
    state: row.state,
    backend: row.backend,
    image: row.image,
    generation: row.generation,
    failure_reason: row.failureReason,
    oom_kills: row.oomKills,
    created_at: row.createdAt.toISOString(),
    ready_at: iso(row.readyAt),
    claimed_at: iso(row.claimedAt),
    ended_at: iso(row.endedAt),
  };
}
