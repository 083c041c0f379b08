// Retry timing shared by every Kubernetes call and the informers' watch loops.

export interface BackoffOptions {
  /** First delay. */
  baseMs: number;
  /** No delay grows beyond this. */
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 200, maxMs: 30_000 };

/**
 * backoffDelay is the wait before retry number `attempt` (0-based): exponential, capped, with
 * "equal jitter" (half fixed, half random) so many clients that failed together do not retry in
 * lockstep against a recovering API server.
 */
export function backoffDelay(
  attempt: number,
  options: BackoffOptions = DEFAULT_BACKOFF,
  random: () => number = Math.random,
): number {
  const exp = Math.min(options.maxMs, options.baseMs * 2 ** Math.min(attempt, 30));
  return Math.round(exp / 2 + (exp / 2) * random());
}

/**
 * retryAfterMs reads a Retry-After header (seconds, or an HTTP date) as a delay, capped at
 * `maxMs`; null when absent or unreadable. The API server sends it with 429 and some 5xx.
 */
export function retryAfterMs(
  header: string | string[] | undefined,
  now: number = Date.now(),
  maxMs = 60_000,
): number | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return null;
  if (/^\s*\d+\s*$/.test(value)) return Math.min(maxMs, Number(value) * 1000);
  const at = Date.parse(value);
  if (Number.isNaN(at)) return null;
  return Math.min(maxMs, Math.max(0, at - now));
}

/** isRetryableStatus: overload (429) and the server-side errors that are worth another try. */
export const isRetryableStatus = (status: number) =>
  status === 429 || status === 500 || status === 502 || status === 503 || status === 504;

/** sleep that ends early (rejecting) when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal as AbortSignal));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export const abortReason = (signal: AbortSignal): Error =>
  signal.reason instanceof Error ? signal.reason : new Error('aborted');
