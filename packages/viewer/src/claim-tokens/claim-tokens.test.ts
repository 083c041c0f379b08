import { describe, expect, it } from 'vitest';
import { claimTokenState } from './claim-tokens.js';

describe('claimTokenState', () => {
  const now = new Date('2026-12-10T12:00:00.000Z');
  const later = new Date(now.getTime() + 1000);

  it('reads ended, then revoked, then expired, then active', () => {
    expect(claimTokenState({ isEnded: true, isRevoked: true, expiresAt: now }, now)).toBe('ended');
    expect(claimTokenState({ isEnded: false, isRevoked: true, expiresAt: later }, now)).toBe(
      'revoked',
    );
    expect(claimTokenState({ isEnded: false, isRevoked: false, expiresAt: now }, now)).toBe(
      'expired',
    );
    expect(claimTokenState({ isEnded: false, isRevoked: false, expiresAt: later }, now)).toBe(
      'active',
    );
  });
});
