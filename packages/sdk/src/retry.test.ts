import { describe, expect, it } from 'vitest';
import { backoffMs, DEFAULT_RETRY, retryAfterMs, sleep } from './retry.js';

describe('backoff and Retry-After', () => {
  it('backoff doubles per attempt, keeps half of each step fixed and stays under the cap', () => {
    expect(backoffMs(0, DEFAULT_RETRY, () => 0)).toBe(100);
    expect(backoffMs(0, DEFAULT_RETRY, () => 0.999)).toBeCloseTo(199.9, 0);
    expect(backoffMs(3, DEFAULT_RETRY, () => 0)).toBe(800);
    expect(backoffMs(30, DEFAULT_RETRY, () => 1)).toBe(DEFAULT_RETRY.maxDelayMs);
  });

  it('Retry-After is read as seconds or as an HTTP date; anything else is ignored', () => {
    expect(retryAfterMs('2')).toBe(2000);
    expect(retryAfterMs('0')).toBe(0);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs('Thu, 01 Jan 2026 00:00:03 GMT', now)).toBe(3000);
    expect(retryAfterMs(null)).toBeNull();
    expect(retryAfterMs('soon')).toBeNull();
  });

  it('sleep rejects with the abort reason at once', async () => {
    const controller = new AbortController();
    const waiting = sleep(60_000, controller.signal);
    controller.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
  });
});
