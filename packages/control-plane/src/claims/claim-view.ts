import type { Claim as ClaimView, PrimedWindow } from '@cubicle/contract/api';
import type { ClaimRow } from '../repositories/claims.js';
import { toSandboxView } from './sandbox-view.js';

/** The include every claim query uses so toClaimView has what it renders. */
export const claimInclude = { pool: { select: { name: true } }, sandbox: true } as const;

/** toClaimView renders a claim with its sandbox (null while pending). */
export function toClaimView(row: ClaimRow): ClaimView {
  return {
    id: row.id,
    name: row.name,
    pool: row.pool.name,
    pool_id: row.poolId,
    status: row.status,
    sandbox: row.sandbox ? toSandboxView(row.sandbox, row.pool.name) : null,
    // Written by the worker when the desktop turned warm (primeDesktop), as the contract's shape.
    primed_windows: (row.sandbox?.primedWindows as PrimedWindow[] | undefined) ?? [],
    metadata: row.metadata as Record<string, string>,
    ttl_seconds: row.ttlSeconds,
    expires_at: row.expiresAt.toISOString(),
    max_expires_at: row.maxExpiresAt.toISOString(),
    idle_timeout_seconds: row.idleTimeoutSeconds,
    last_heartbeat_at: row.lastHeartbeatAt.toISOString(),
    released_at: row.releasedAt ? row.releasedAt.toISOString() : null,
    release_reason: row.releaseReason,
    created_at: row.createdAt.toISOString(),
    time_to_first_confirmed_action_ms: row.firstConfirmedActionAt
      ? Math.max(0, row.firstConfirmedActionAt.getTime() - row.createdAt.getTime())
      : null,
    paused_at: row.pausedAt ? row.pausedAt.toISOString() : null,
    // The open pause counts up to the moment of the answer (or the release it ended with).
    paused_seconds:
      (Number(row.pausedMs) +
        (row.pausedAt
          ? Math.max(0, (row.releasedAt?.getTime() ?? Date.now()) - row.pausedAt.getTime())
          : 0)) /
      1000,
  };
}
