import { isFinalRunStatus, RunStatus, type RunEvent } from '@cubicle/contract/api';
import type { Db } from '@cubicle/db';
import { readRunEvents } from './manage-runs.js';
import { decodeRunEventBatch, runEventsChannel } from './run-channels.js';

/** The subscriber part of a Redis connection (ioredis in subscriber mode fits). */
export interface RunSubscriber {
  subscribe(...channels: string[]): Promise<unknown>;
  unsubscribe(...channels: string[]): Promise<unknown>;
  on(event: 'message', listener: (channel: string, message: string) => void): unknown;
}

/** Without any message for this long a follower re-reads the database (a lost message). */
const SAFETY_POLL_MS = 2000;
const PAGE = 1000;

/** isFinalEvent: the last event of every run is a final status. */
export function isFinalEvent(event: RunEvent): boolean {
  if (event.type !== 'status') return false;
  const status = RunStatus.safeParse(event.data.status);
  return status.success && isFinalRunStatus(status.data);
}

type Listener = (batch: RunEvent[]) => void;

/**
 * RunEventFeed is how the API follows runs live: one subscriber connection per process, one
 * channel per followed run (shared by its followers). `follow` subscribes first, then reads
 * the history after the reader's seq, then applies live batches: an event it already has is
 * skipped, a gap (a batch published out of order, a lost message) is filled from the database,
 * where every published event already is. So a reader that resumes after seq k gets k+1, k+2, …
 * each exactly once, in order, until the run's final status.
 */
export class RunEventFeed {
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly subscribing = new Map<string, Promise<unknown>>();
  private started = false;

  constructor(
    private readonly db: Db,
    private readonly subscriber: RunSubscriber,
    private readonly prefix: string,
  ) {}

  private ensureListening() {
    if (this.started) return;
    this.started = true;
    this.subscriber.on('message', (channel, message) => {
      const set = this.listeners.get(channel);
      if (!set) return;
      let batch: RunEvent[];
      try {
        batch = decodeRunEventBatch(message);
      } catch {
        return;
      }
      for (const listener of set) listener(batch);
    });
  }

  private async listen(runId: string, listener: Listener): Promise<() => Promise<void>> {
    this.ensureListening();
    const channel = runEventsChannel(this.prefix, runId);
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
      this.subscribing.set(channel, this.subscriber.subscribe(channel));
    }
    set.add(listener);
    await this.subscribing.get(channel);
    return async () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(channel) === set) {
        this.listeners.delete(channel);
        this.subscribing.delete(channel);
        await this.subscriber.unsubscribe(channel).catch(() => undefined);
      }
    };
  }

  /**
   * follow sends the run's events after `afterSeq` to `emit` (awaited: a slow reader slows its
   * own stream, never the run) until the final status has been sent or `signal` aborts.
   * Resolves true when the run's end was reached.
   */
  async follow(
    runId: string,
    afterSeq: number,
    emit: (events: RunEvent[]) => Promise<void>,
    signal: AbortSignal,
  ): Promise<boolean> {
    let next = afterSeq + 1;
    const inbox: RunEvent[][] = [];
    let wake: (() => void) | null = null;
    const stop = await this.listen(runId, (batch) => {
      inbox.push(batch);
      wake?.();
    });
    const onAbort = () => wake?.();
    signal.addEventListener('abort', onAbort);
    try {
      let needsRead = true;
      while (!signal.aborted) {
        if (needsRead) {
          needsRead = false;
          for (;;) {
            const page = await readRunEvents({ db: this.db }, runId, next - 1, PAGE);
            if (page.length > 0) {
              await emit(page);
              next = page.at(-1)!.seq + 1;
              if (page.some(isFinalEvent)) return true;
            }
            if (page.length < PAGE || signal.aborted) break;
          }
        }
        while (inbox.length > 0 && !needsRead && !signal.aborted) {
          const batch = inbox.shift()!.filter((e) => e.seq >= next);
          if (batch.length === 0) continue;
          if (batch[0]!.seq !== next) {
            needsRead = true; // a gap: the database has it
            break;
          }
          await emit(batch);
          next = batch.at(-1)!.seq + 1;
          if (batch.some(isFinalEvent)) return true;
        }
        if (needsRead || signal.aborted) continue;
        const woke = await new Promise<boolean>((resolve) => {
          wake = () => resolve(true);
          setTimeout(() => resolve(false), SAFETY_POLL_MS).unref();
        });
        wake = null;
        if (!woke) needsRead = true;
      }
      return false;
    } finally {
      signal.removeEventListener('abort', onAbort);
      await stop();
    }
  }
}
