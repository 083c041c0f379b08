import { describe, expect, it } from 'vitest';
import { claimEndedBy } from './live-claim-memory.js';

describe('claimEndedBy', () => {
  it('names the claim of a claim-end broadcast', () => {
    expect(claimEndedBy(JSON.stringify({ kind: 'claim', claim_id: 'clm_1' }))).toBe('clm_1');
  });

  it('ignores a revoked ticket and anything that is not such a message', () => {
    expect(claimEndedBy(JSON.stringify({ kind: 'ticket', ticket_id: 'vt_1' }))).toBeNull();
    expect(claimEndedBy(JSON.stringify({ kind: 'claim', claim_id: 7 }))).toBeNull();
    expect(claimEndedBy('not json')).toBeNull();
    expect(claimEndedBy('null')).toBeNull();
  });
});
