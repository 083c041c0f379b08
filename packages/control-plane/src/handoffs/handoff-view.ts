import type { Handoff as HandoffView } from '@cubicle/contract/api';
import type { Handoff } from '@cubicle/db';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** toHandoffView renders a handoff row as the contract's Handoff. */
export function toHandoffView(row: Handoff): HandoffView {
  return {
    id: row.id,
    claim_id: row.claimId,
    state: row.state,
    reason: row.reason,
    for: row.forWhom,
    ttl_seconds: row.ttlSeconds,
    lease_expires_at: row.leaseExpiresAt.toISOString(),
    requested_at: row.createdAt.toISOString(),
    requested_by_key_id: row.requestedByKeyId,
    taken_at: iso(row.takenAt),
    taken_by_key_id: row.takenByKeyId,
    last_input_at: iso(row.lastInputAt),
    ended_at: iso(row.endedAt),
    ended_by_key_id: row.endedByKeyId,
    note: row.note,
    held_ms: row.endedAt ? Math.max(0, row.endedAt.getTime() - row.createdAt.getTime()) : null,
  };
}
