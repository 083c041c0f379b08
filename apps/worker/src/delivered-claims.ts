import { viewerChannel } from '@cubicle/control-plane';
import { sqlPoolOf, type Db } from '@cubicle/db';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

export interface DeliveredClaimsOptions {
  db: Db;
  /** A connection in subscriber mode (shared with other listeners of this process). */
  subscriber: Redis;
  prefix: string;
  log: Logger;
  /** The safety net: remembered claims that ended are forgotten this often at the latest. */
  pruneIntervalMs?: number;
}

/**
 * DeliveredClaims remembers the claims whose secrets this worker process already wrote into
 * their desktop before a first guest call, so later calls of the claim skip the lookup. It holds
 * nothing past a claim's end: the claim-end broadcast every release publishes (the viewer
 * revocation channel, `{kind:'claim'}`) forgets the claim at once, and a periodic check against
 * the database forgets any whose message was lost. Forgetting too early is harmless (the next
 * call delivers again; the delivery writes the whole set), keeping too long is the leak this
 * class exists to prevent.
 */
export class DeliveredClaims {
  private readonly claims = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private pruning: Promise<void> | undefined;
  private readonly channel: string;

  constructor(private readonly options: DeliveredClaimsOptions) {
    this.channel = viewerChannel(options.prefix);
  }

  get size(): number {
    return this.claims.size;
  }

  has(claimId: string): boolean {
    return this.claims.has(claimId);
  }

  add(claimId: string): void {
    this.claims.add(claimId);
  }

  async start(): Promise<void> {
    this.options.subscriber.on('message', (channel, message) => {
      if (channel !== this.channel || this.claims.size === 0) return;
      const claimId = claimEndedBy(message);
      if (claimId) this.claims.delete(claimId);
    });
    await this.options.subscriber.subscribe(this.channel);
    this.timer = setInterval(() => void this.prune(), this.options.pruneIntervalMs ?? 5_000);
    this.timer.unref();
  }

  /** prune forgets every remembered claim that is no longer active (one indexed query). */
  prune(): Promise<void> {
    this.pruning ??= (async () => {
      try {
        if (this.claims.size === 0) return;
        const ids = [...this.claims];
        const { rows } = await sqlPoolOf(this.options.db).query<{ id: string }>({
          name: 'cubicle_worker_active_claims_of_v1',
          text: `SELECT id FROM claims WHERE id = ANY($1::text[]) AND status = 'active'`,
          values: [ids],
        });
        const active = new Set(rows.map((r) => r.id));
        for (const id of ids) if (!active.has(id)) this.claims.delete(id);
      } catch (err) {
        this.options.log.warn({ err: (err as Error).message }, 'delivered claims: prune failed');
      } finally {
        this.pruning = undefined;
      }
    })();
    return this.pruning;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.pruning;
    this.claims.clear();
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
