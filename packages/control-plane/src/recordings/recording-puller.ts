import { pullDueRecordings, type RecordingDeps } from './pull-recordings.js';
import { sweepRecordings } from './sweep-recordings.js';

export interface RecordingPullerOptions {
  /** This worker's name in leases (unique per process). */
  owner: string;
  /** Between passes; a finished segment waits at most this long (plus its upload). */
  intervalMs?: number;
  /** Between retention sweeps. */
  sweepIntervalMs?: number;
  log: { warn(obj: object, msg: string): void };
}

/**
 * startRecordingPuller runs the worker's recording loop: every `intervalMs` it pulls the
 * finished segments of recordings it can lease, and now and then sweeps expired recordings.
 * Passes never overlap; `close` waits for the running one.
 */
export function startRecordingPuller(
  deps: RecordingDeps,
  options: RecordingPullerOptions,
): { close(): Promise<void> } {
  const intervalMs = options.intervalMs ?? 1000;
  const sweepEvery = options.sweepIntervalMs ?? 60_000;
  let lastSweep = 0;
  let closed = false;
  let running: Promise<void> | undefined;
  const onError = (claimId: string, err: unknown) =>
    options.log.warn(
      { claim_id: claimId, err: err instanceof Error ? err.message : String(err) },
      'recording pull failed; the next pass retries',
    );
  const pass = async () => {
    await pullDueRecordings(deps, options.owner, onError);
    if (Date.now() - lastSweep > sweepEvery) {
      lastSweep = Date.now();
      await sweepRecordings(deps);
    }
  };
  const timer = setInterval(() => {
    // A slow pass (a slow store) is never stacked behind: the next tick after it runs.
    if (closed || running) return;
    running = pass()
      .catch((err: unknown) => onError('*', err))
      .finally(() => (running = undefined));
  }, intervalMs);
  return {
    async close() {
      closed = true;
      clearInterval(timer);
      await running;
    },
  };
}
