import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_POLICY, nextAttemptAt } from './retry-schedule.js';

describe('nextAttemptAt', () => {
  const created = new Date('2026-12-01T00:00:00.000Z');
  const noJitter = () => 0;

  it('doubles the gap from the base after each failed attempt', () => {
    const policy = { baseMs: 1000, windowMs: 3600_000, maxGapMs: 3600_000 };
    const gaps = [1, 2, 3, 4].map(
      (n) => nextAttemptAt(policy, n, created, created, noJitter)!.getTime() - created.getTime(),
    );
    expect(gaps).toEqual([1000, 2000, 4000, 8000]);
  });

  it('caps each gap and adds at most 10 % jitter', () => {
    const at = nextAttemptAt(DEFAULT_RETRY_POLICY, 30, created, created, () => 0.999)!;
    const gap = at.getTime() - created.getTime();
    expect(gap).toBeGreaterThanOrEqual(DEFAULT_RETRY_POLICY.maxGapMs);
    expect(gap).toBeLessThanOrEqual(DEFAULT_RETRY_POLICY.maxGapMs * 1.1);
  });

  it('stops when the next attempt would fall after the 24 h window', () => {
    const late = new Date(created.getTime() + 23.5 * 3600_000);
    expect(nextAttemptAt(DEFAULT_RETRY_POLICY, 20, created, late, noJitter)).toBeNull();
    const early = new Date(created.getTime() + 3600_000);
    expect(nextAttemptAt(DEFAULT_RETRY_POLICY, 5, created, early, noJitter)).not.toBeNull();
  });

  it('keeps retrying for about 24 hours with the default policy', () => {
    let now = created;
    let attempts = 1;
    for (;;) {
      const next = nextAttemptAt(DEFAULT_RETRY_POLICY, attempts, created, now, noJitter);
      if (!next) break;
      now = next;
      attempts++;
    }
    expect(now.getTime() - created.getTime()).toBeGreaterThan(22 * 3600_000);
    expect(now.getTime() - created.getTime()).toBeLessThanOrEqual(24 * 3600_000);
    expect(attempts).toBeGreaterThan(10);
  });
});
