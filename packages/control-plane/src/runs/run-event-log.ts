import type { RunEvent } from '@cubicle/contract/api';
import { eventBytes, type NewRunEvent } from './append-run-events.js';
import { commitRunEvents } from './run-event-committer.js';
import type { RunDeps } from '../resources.js';

/** One commit carries at most this much output (a bound on statement and message size). */
const MAX_BATCH_BYTES = 2 * 1024 * 1024;
/** Above this much unwritten output the producer is asked to pause (see onPressure). */
const HIGH_WATER_BYTES = 8 * 1024 * 1024;
const LOW_WATER_BYTES = 2 * 1024 * 1024;
const RETRY_MS = 250;
/**
 * Commits of one run start at least this far apart. A quiet run's event still goes at once (its
 * previous commit is long past); a chatty run's output gathers for a few ms into one commit and
 * one published message instead of one per chunk, which is what Postgres, Redis, this process
 * and every API follower pay per message. The price is at most this much added latency.
 */
export const MIN_COMMIT_INTERVAL_MS = 5;

/**
 * RunEventLog is the group commit of one run's events: `add` queues an event; if no commit is in
 * flight (and none started in the last MIN_COMMIT_INTERVAL_MS) one starts at once, else the event
 * joins the next, so a quiet run's line is stored and published within one round trip while a
 * chatty run's output goes in few large commits. Commits
 * of one log never overlap, so seq follows the order of `add`. Each commit is published after
 * it is durable: a live reader never sees an event the database does not have.
 */
export class RunEventLog {
  private pending: NewRunEvent[] = [];
  private pendingBytes = 0;
  private flushing: Promise<void> | null = null;
  private paused = false;
  private lastCommitAt = 0;
  /** Ends the wait between two commits early (flush: the caller waits for everything now). */
  private hurry: (() => void) | null = null;
  /** The last seq stored (for the caller's own bookkeeping). */
  lastSeq = 0;

  constructor(
    private readonly deps: RunDeps,
    private readonly runId: string,
    /** Called with true above the high-water mark, false once it is drained below the low one. */
    private readonly onPressure: (pause: boolean) => void = () => undefined,
    private readonly onCommitted: (events: RunEvent[]) => void = () => undefined,
  ) {}

  add(event: NewRunEvent, bytes = 0) {
    this.pending.push(event);
    this.pendingBytes += bytes;
    if (!this.paused && this.pendingBytes > HIGH_WATER_BYTES) {
      this.paused = true;
      this.onPressure(true);
    }
    // A commit that keeps failing drops this batch (after ~5 s of retries) rather than reject
    // where nobody awaits; the run's end is still recorded.
    this.flushing ??= this.drain().catch(() => {
      this.pending = [];
      this.pendingBytes = 0;
      if (this.paused) {
        this.paused = false;
        this.onPressure(false);
      }
    });
  }

  /** flush resolves once everything added so far is committed and published. */
  async flush(): Promise<void> {
    this.hurry?.();
    while (this.flushing) await this.flushing;
  }

  private async drain(): Promise<void> {
    try {
      while (this.pending.length > 0) {
        await this.spaceCommits();
        this.lastCommitAt = Date.now();
        const batch: NewRunEvent[] = [];
        let bytes = 0;
        while (this.pending.length > 0 && (batch.length === 0 || bytes < MAX_BATCH_BYTES)) {
          const next = this.pending.shift()!;
          batch.push(next);
          bytes += eventBytes(next);
        }
        this.pendingBytes = Math.max(0, this.pendingBytes - bytes);
        // Stored and published (see commitRunEvents: with other runs' batches, when there are).
        const events = await this.commit(batch);
        this.lastSeq = events.at(-1)?.seq ?? this.lastSeq;
        this.onCommitted(events);
        if (this.paused && this.pendingBytes < LOW_WATER_BYTES) {
          this.paused = false;
          this.onPressure(false);
        }
      }
    } finally {
      this.flushing = null;
    }
  }

  /** spaceCommits waits until MIN_COMMIT_INTERVAL_MS has passed since the last commit started. */
  private async spaceCommits(): Promise<void> {
    const waitMs = this.lastCommitAt + MIN_COMMIT_INTERVAL_MS - Date.now();
    if (waitMs <= 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, waitMs);
      this.hurry = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.hurry = null;
  }

  /** commit retries a failed insert: losing output silently is worse than storing it late. */
  private async commit(batch: NewRunEvent[]): Promise<RunEvent[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await commitRunEvents(this.deps, this.runId, batch);
      } catch (err) {
        if (attempt >= 20) throw err;
        await new Promise((r) => setTimeout(r, RETRY_MS));
      }
    }
  }
}
