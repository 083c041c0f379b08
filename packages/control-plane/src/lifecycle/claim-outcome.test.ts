import { describe, expect, it } from 'vitest';
import { ClaimBatchRow, claimOutcomeOf } from './claim-outcome.js';

const row = (over: Record<string, unknown> = {}) => ({
  idx: 0,
  outcome: 'pending',
  pool_id: 'pool_1',
  lim: null,
  used: null,
  replay_status: null,
  claim: {
    id: 'claim_1',
    tenant_id: 'ten_1',
    pool_id: 'pool_1',
    sandbox_id: null,
    name: 'c-1',
    status: 'pending',
    metadata: { job: '1' },
    ttl_seconds: 600,
    idle_timeout_seconds: null,
    expires_at: '2026-12-07T16:00:00.000+00:00',
    max_expires_at: '2026-12-07T20:00:00.000+00:00',
    last_heartbeat_at: '2026-12-07T15:50:00.000+00:00',
    created_at: '2026-12-07T15:50:00.000+00:00',
    updated_at: '2026-12-07T15:50:00.000+00:00',
    paused_ms: 0,
  },
  sandbox: null,
  err_code: null,
  err_message: null,
  has_hooks: false,
  pool_recording: null,
  ...over,
});

describe('ClaimBatchRow', () => {
  it('reads a claim row from its to_jsonb object', () => {
    const outcome = claimOutcomeOf(ClaimBatchRow.parse(row()));
    expect(outcome.kind).toBe('pending');
    if (outcome.kind !== 'pending') return;
    expect(outcome.claim.id).toBe('claim_1');
    expect(outcome.claim.expiresAt.toISOString()).toBe('2026-12-07T16:00:00.000Z');
  });

  it('refuses a claim or sandbox that is not a JSON object', () => {
    for (const bad of [[], 'claim_1', 1, true])
      for (const field of ['claim', 'sandbox'])
        expect(
          ClaimBatchRow.safeParse(row({ [field]: bad })).success,
          `${field}: ${String(bad)}`,
        ).toBe(false);
  });
});
