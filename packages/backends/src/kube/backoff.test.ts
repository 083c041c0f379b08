import { describe, expect, it } from 'vitest';
import { backoffDelay, isRetryableStatus, retryAfterMs, sleep } from './backoff.js';

describe('backoffDelay', () => {
  const opts = { baseMs: 100, maxMs: 1000 };
  it('doubles per attempt between half and all of the step', () => {
    expect(backoffDelay(0, opts, () => 0)).toBe(50);
    expect(backoffDelay(0, opts, () => 1)).toBe(100);
    expect(backoffDelay(2, opts, () => 0)).toBe(200);
    expect(backoffDelay(2, opts, () => 1)).toBe(400);
  });
  it('never exceeds the cap, even for huge attempt numbers', () => {
    expect(backoffDelay(10, opts, () => 1)).toBe(1000);
    expect(backoffDelay(5000, opts, () => 1)).toBe(1000);
    expect(backoffDelay(5000, opts, () => 0)).toBe(500);
  });
});

describe('retryAfterMs', () => {
  it('reads seconds and HTTP dates, capped', () => {
    expect(retryAfterMs('3')).toBe(3000);
    expect(retryAfterMs(['2'])).toBe(2000);
    expect(retryAfterMs('600', 0, 10_000)).toBe(10_000);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs('Thu, 01 Jan 2026 00:00:05 GMT', now)).toBe(5000);
    expect(retryAfterMs('Wed, 31 Dec 2025 00:00:05 GMT', now)).toBe(0);
  });
  it('is null when absent or unreadable', () => {
    expect(retryAfterMs(undefined)).toBeNull();
    expect(retryAfterMs('soon')).toBeNull();
  });
});

describe('isRetryableStatus', () => {
  it('retries overload and server errors, not client errors', () => {
    expect([429, 500, 502, 503, 504].every(isRetryableStatus)).toBe(true);
    expect([400, 401, 403, 404, 409, 410, 422].some(isRetryableStatus)).toBe(false);
  });
});

describe('sleep', () => {
  it('rejects with the abort reason when aborted', async () => {
    const ctl = new AbortController();
    const p = sleep(60_000, ctl.signal);
    ctl.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
  });
});
