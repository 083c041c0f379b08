import { guestAttachChannel, type WorkerDeps } from '@cubicle/control-plane';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

export interface ClaimMirrorOptions {
  /** A connection of its own, put in subscriber mode for attach requests. */
  subscriber: Redis;
  prefix: string;
  log: Logger;
  /** The safety net: claimed sandboxes are looked up this often even without attach requests. */
  scanIntervalMs?: number;
}

/**
 * ClaimMirror tells backends that mirror claims (Kubernetes flips a state label) which of their
 * sandboxes are claimed: at once on the API's attach hint before a sandbox's first call, and by
 * a periodic scan of claimed sandboxes (a restarted worker, a missed message). Advisory only —
 * the database decides who holds a sandbox. Its memo of mirrored sandboxes is pruned by every
 * scan, so it holds no sandbox after its claim ends; with no such backend configured it does
 * nothing at all.
 */
export class ClaimMirror {
  private readonly mirrored = new Set<string>();
  private readonly kinds: string[];
  private timer: NodeJS.Timeout | undefined;
  private scanning: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly deps: WorkerDeps,
    private readonly options: ClaimMirrorOptions,
  ) {
    this.kinds = Object.entries(deps.backends)
      .filter(([, b]) => typeof b?.markClaimed === 'function')
      .map(([kind]) => kind);
  }

  get size(): number {
    return this.mirrored.size;
  }

  async start(): Promise<void> {
    if (this.kinds.length === 0) return;
    const channel = guestAttachChannel(this.options.prefix);
    this.options.subscriber.on('message', (ch, sandboxId) => {
      if (ch === channel) void this.attach(sandboxId);
    });
    await this.options.subscriber.subscribe(channel);
    await this.scan();
    this.timer = setInterval(() => void this.scan(), this.options.scanIntervalMs ?? 2_000);
    this.timer.unref();
  }

  /** attach mirrors a sandbox if the database says it is claimed (the message is only a hint). */
  private async attach(sandboxId: string): Promise<void> {
    if (this.closed || this.mirrored.has(sandboxId) || !/^sbx_[0-9a-z]{26}$/.test(sandboxId))
      return;
    const row = await this.deps.db.sandbox.findFirst({
      where: { id: sandboxId, state: 'claimed', backend: { in: this.kinds as never } },
      select: { id: true, backend: true },
    });
    if (row) await this.markClaimed(row.id, row.backend);
  }

  /** scan mirrors every claimed sandbox not mirrored yet and forgets the others; never concurrent. */
  private scan(): Promise<void> {
    this.scanning ??= (async () => {
      try {
        const rows = await this.deps.db.sandbox.findMany({
          where: { state: 'claimed', backend: { in: this.kinds as never } },
          select: { id: true, backend: true },
        });
        const claimed = new Set(rows.map((r) => r.id));
        for (const id of [...this.mirrored]) if (!claimed.has(id)) this.mirrored.delete(id);
        for (const r of rows) if (!this.mirrored.has(r.id)) await this.markClaimed(r.id, r.backend);
      } catch (err) {
        this.options.log.warn({ err: (err as Error).message }, 'claim mirror scan failed');
      } finally {
        this.scanning = undefined;
      }
    })();
    return this.scanning;
  }

  private async markClaimed(sandboxId: string, kind: string): Promise<void> {
    if (this.closed) return;
    this.mirrored.add(sandboxId);
    try {
      await this.deps.backends[kind as keyof WorkerDeps['backends']]?.markClaimed?.(sandboxId);
    } catch (err) {
      this.mirrored.delete(sandboxId); // the next scan tries again
      this.options.log.warn({ sandboxId, err: (err as Error).message }, 'claim not mirrored');
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.scanning;
  }
}
