import { describe, expect, it } from 'vitest';
import { planCreate, type PoolSnapshot } from './plan-pool.js';

const base: PoolSnapshot = {
  min: 0,
  initial: 2,
  max: 5,
  provisioning: 0,
  warm: 0,
  claimed: 0,
  pending: 0,
  tenantRoom: 100,
  recentFailures: 0,
};

describe('planCreate', () => {
  it('fills the warm buffer on a new pool', () => expect(planCreate(base)).toBe(2));
  it('counts starting sandboxes toward the buffer', () =>
    expect(planCreate({ ...base, provisioning: 1, warm: 1 })).toBe(0));
  it('refills after a claim takes a warm sandbox', () =>
    expect(planCreate({ ...base, warm: 1, claimed: 1 })).toBe(1));
  it('provisions for waiting claims on top of the buffer, up to max', () => {
    expect(planCreate({ ...base, claimed: 2, pending: 2 })).toBe(3);
    expect(planCreate({ ...base, claimed: 4, pending: 3 })).toBe(1);
  });
  it('never exceeds max or the tenant room', () => {
    expect(planCreate({ ...base, claimed: 5 })).toBe(0);
    expect(planCreate({ ...base, tenantRoom: 1 })).toBe(1);
  });
  it('keeps at least min live', () => expect(planCreate({ ...base, min: 4, initial: 0 })).toBe(4));
  it('pauses after repeated failures', () =>
    expect(planCreate({ ...base, recentFailures: 3 })).toBe(0));
});
