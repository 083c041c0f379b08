import { describe, expect, it } from 'vitest';
import { ClaimId, PoolId } from '@cubicle/contract/api';
import { newId, ulid } from './ids.js';

describe('ids', () => {
  it('match the contract schema of their kind', () => {
    for (let i = 0; i < 200; i++) {
      expect(ClaimId.safeParse(newId('claim')).success).toBe(true);
      expect(PoolId.safeParse(newId('pool')).success).toBe(true);
    }
  });

  it('sort by creation time', () => {
    const a = ulid(1_700_000_000_000);
    const b = ulid(1_700_000_000_001);
    expect(a < b).toBe(true);
    expect(a).toHaveLength(26);
  });

  it('do not repeat', () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => newId('sandbox')));
    expect(ids.size).toBe(10_000);
  });
});
