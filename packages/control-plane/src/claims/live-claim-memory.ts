import type { Db } from '@cubicle/db';
import { liveClaimIdsAmong } from '../repositories/claims.js';
import { nowOf, type Subscriber } from '../context.js';
import { viewerChannel } from '../viewer/viewer-events.js';

export interface LiveClaimMemoryOptions {
  db: Db;
  /** A connection in subscriber mode (shared with the process's other listeners). */
  subscriber: Subscriber;
  /** The BullMQ prefix the claim-end broadcast is scoped by. */
  prefix: string;
  /** The safety net: remembered claims that ended are forgotten this often at the latest. */
  pruneIntervalMs?: number;
  /** At most this many claims are remembered; past it the oldest is forgotten. */
  maxEntries?: number;
  /** Told of a failed prune (the entries stay until the next one). */
  onError?: (err: unknown) => void;
  /** The clock liveness is judged by (Deps.now); Date.now when absent. */
  now?: (() => Date) | undefined;
}

/**
 * LiveClaimMemory keeps one value per live claim in one process, and nothing past a claim's end:
 * the claim-end broadcast every release publishes (the viewer revocation channel,
 * `{kind:'claim'}`) forgets the claim at once; a periodic check against the database forgets any
 * whose message was lost (pub/sub drops messages while a subscriber reconnects); and a size bound
 * drops the oldest. A user must treat an entry as a hint that may be gone at any time, never as
 * the truth about the claim: forgetting early only costs a lookup, keeping too long is the leak
 * this class exists to prevent.
 */
export class LiveClaimMemory<V> {
  private readonly entries = new Map<string, V>();
  private readonly channel: string;
  private readonly maxEntries: number;
  private timer: NodeJS.Timeout | undefined;
  private pruning: Promise<void> | undefined;
  private started: Promise<unknown> | undefined;

  constructor(private readonly options: LiveClaimMemoryOptions) {
    this.channel = viewerChannel(options.prefix);
    this.maxEntries = options.maxEntries ?? 100_000;
  }

  get size(): number {
    return this.entries.size;
  }

  get(claimId: string): V | undefined {
    return this.entries.get(claimId);
  }

  has(claimId: string): boolean {
    return this.entries.has(claimId);
  }

  /** set remembers a value; only once start() has subscribed, or an end could go unheard. */
  set(claimId: string, value: V): void {
    this.entries.delete(claimId); // re-inserted last: the size bound drops the oldest first
    this.entries.set(claimId, value);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  delete(claimId: string): void {
    this.entries.delete(claimId);
  }

  /** start subscribes to the claim-end broadcast and starts the periodic prune (idempotent). */
  start(): Promise<unknown> {
    this.started ??= (async () => {
      this.options.subscriber.on('message', (channel, message) => {
        if (channel !== this.channel || this.entries.size === 0) return;
        const claimId = claimEndedBy(message);
        if (claimId) this.entries.delete(claimId);
      });
      await this.options.subscriber.subscribe(this.channel);
      this.timer = setInterval(() => void this.prune(), this.options.pruneIntervalMs ?? 5_000);
      this.timer.unref();
    })().catch((err: unknown) => {
      this.started = undefined; // the next start tries again
      throw err;
    });
    return this.started;
  }

  /**
   * prune forgets every remembered claim that is no longer live (one indexed query): released,
   * or past its deadline and about to be.
   */
  prune(): Promise<void> {
    this.pruning ??= (async () => {
      try {
        if (this.entries.size === 0) return;
        const ids = [...this.entries.keys()];
        const active = await liveClaimIdsAmong(this.options.db, ids, nowOf(this.options));
        for (const id of ids) if (!active.has(id)) this.entries.delete(id);
      } catch (err) {
        this.options.onError?.(err);
      } finally {
        this.pruning = undefined;
      }
    })();
    return this.pruning;
  }

  /** close stops the prune and forgets everything (the subscriber is its owner's to close). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.pruning;
    this.entries.clear();
  }
}

/** claimEndedBy reads a viewer revocation message; only `{kind:'claim'}` names an ended claim. */
export function claimEndedBy(message: string): string | null {
  try {
    const parsed = JSON.parse(message) as { kind?: unknown; claim_id?: unknown };
    return parsed.kind === 'claim' && typeof parsed.claim_id === 'string' ? parsed.claim_id : null;
  } catch {
    return null;
  }
}
