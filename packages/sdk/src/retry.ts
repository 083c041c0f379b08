/** RetryOptions bound how often and how long a call is retried. */
export interface RetryOptions {
  /** Retries after the first attempt (default 3). */
  maxRetries: number;
  /** First backoff in ms (default 200); doubles each retry. */
  baseDelayMs: number;
  /** Largest backoff in ms; a longer `Retry-After` is not waited for: the error is thrown (default 30 s). */
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryOptions = { maxRetries: 3, baseDelayMs: 200, maxDelayMs: 30_000 };

/**
 * backoffMs is exponential backoff with "equal jitter": half the step is fixed, half random, so
 * clients that failed together do not come back together yet each still waits a while.
 */
export function backoffMs(attempt: number, options: RetryOptions, random = Math.random): number {
  const step = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** attempt);
  return step / 2 + random() * (step / 2);
}

/** retryAfterMs reads `Retry-After` (seconds or an HTTP date); null when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | null {
  if (header === null || header.trim() === '') return null;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** RETRYABLE_STATUSES: the answers a retry can change (the gateway or the service was unavailable). */
export const RETRYABLE_STATUSES = new Set([429, 502, 503, 504]);

/** sleep waits, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
