import type {
  Pool as PoolView,
  PoolCounts,
  PoolKubernetes,
  PoolPrime,
} from '@cubicle/contract/api';
import type { EgressPolicy } from '@cubicle/contract/api';
import type { Pool } from '@cubicle/db';
import { poolRecordingView } from '../recordings/recording-settings.js';

export const emptyCounts = (): PoolCounts => ({
  provisioning: 0,
  warm: 0,
  claimed: 0,
  releasing: 0,
  failed: 0,
});

/** toPoolView renders a pool row with its live sandbox counts. */
export function toPoolView(row: Pool, counts: PoolCounts): PoolView {
  return {
    id: row.id,
    name: row.name,
    image: row.image,
    backend: row.backend,
    cpu: row.cpuMillis / 1000,
    memory_mb: row.memoryMb,
    autoscaling: { min: row.minSize, initial: row.initialSize, max: row.maxSize },
    claim_ttl_seconds: row.claimTtlSeconds,
    max_claim_lifetime_seconds: row.maxClaimLifetimeSeconds,
    idle_timeout_seconds: row.idleTimeoutSeconds,
    idle_pause_seconds: row.idlePauseSeconds,
    env: row.env as Record<string, string>,
    egress: Object.keys(row.egress as object).length === 0 ? null : (row.egress as EgressPolicy),
    kubernetes:
      Object.keys(row.kubernetes as object).length === 0
        ? null
        : (row.kubernetes as PoolKubernetes),
    // Stored as the contract parsed it (PoolSpec), defaults filled in.
    prime: (row.prime as PoolPrime | null) ?? null,
    // Stored as [] when absent (the default set), shown as null.
    profile_paths: row.profilePaths.length > 0 ? row.profilePaths : null,
    recording: poolRecordingView(row.recording),
    state: row.state,
    generation: row.generation,
    counts,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
