import { describe, expect, it } from 'vitest';
import { claimAnswerStatus, isClaimLive, whyClaimIsNotLive } from './claim-liveness.js';

describe('isClaimLive', () => {
  const now = new Date('2026-12-08T09:00:00.000Z');
  const at = (ms: number) => new Date(now.getTime() + ms);

  it('is live only while active and before its deadline, on the clock it is given', () => {
    expect(isClaimLive({ status: 'active', expiresAt: at(1) }, now)).toBe(true);
    expect(isClaimLive({ status: 'active', expiresAt: at(0) }, now)).toBe(false);
    expect(isClaimLive({ status: 'active', expiresAt: at(-1) }, now)).toBe(false);
    expect(isClaimLive({ status: 'pending', expiresAt: at(60_000) }, now)).toBe(false);
    expect(isClaimLive({ status: 'released', expiresAt: at(60_000) }, now)).toBe(false);
    // The clock decides, not the wall: the same claim seen an hour later has ended.
    expect(isClaimLive({ status: 'active', expiresAt: at(60_000) }, at(3_600_000))).toBe(false);
  });

  it('names why a claim is not live, and answers 201 only for a claim holding its sandbox', () => {
    expect(whyClaimIsNotLive({ status: 'active', expiresAt: at(-1) })).toBe('expired');
    expect(whyClaimIsNotLive({ status: 'released', expiresAt: at(1) })).toBe('released');
    expect(whyClaimIsNotLive({ status: 'pending', expiresAt: at(1) })).toBe('pending');
    expect([claimAnswerStatus('active'), claimAnswerStatus('pending')]).toEqual([201, 202]);
    expect(claimAnswerStatus('released')).toBe(202);
  });
});
