/** One refused query or connection, as the egress point saw it. */
export interface EgressDenial {
  /** The desktop (sandbox session) id the link belongs to. */
  desktopId: string;
  at: Date;
  protocol: 'tcp' | 'udp' | 'dns';
  name: string | null;
  ip: string | null;
  port: number | null;
  rule: string;
  process: string | null;
  /** Allowed connections are reported too (collapsed the same way) for the Network tab's counts. */
  verdict?: 'allowed' | 'denied';
}

/** Denials of one destination within one batch, collapsed: a retry loop is one line. */
export interface EgressDenialBatchItem extends Omit<EgressDenial, 'at'> {
  count: number;
  firstAt: Date;
  lastAt: Date;
}

export type DenialReporter = (batch: EgressDenialBatchItem[]) => void | Promise<void>;

const keyOf = (d: EgressDenial) =>
  [
    d.verdict ?? 'denied',
    d.desktopId,
    d.protocol,
    d.name ?? '',
    d.ip ?? '',
    d.port ?? '',
    d.rule,
  ].join('\u0000');

/**
 * DenialBatcher collects denials and hands them to `report` at most every `flushMs`, collapsed
 * per destination (the control plane collapses per minute on top). A batch whose report fails
 * is dropped after logging through `onError`: denials are a report, never a reason to hold a
 * connection or grow without bound (at most `maxPending` destinations wait).
 */
export class DenialBatcher {
  private pending = new Map<string, EgressDenialBatchItem>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  dropped = 0;

  constructor(
    private readonly report: DenialReporter,
    private readonly options: {
      flushMs?: number;
      maxPending?: number;
      onError?: (err: unknown) => void;
    } = {},
  ) {}

  add(denial: EgressDenial): void {
    const key = keyOf(denial);
    const hit = this.pending.get(key);
    if (hit) {
      hit.count += 1;
      hit.lastAt = denial.at;
    } else if (this.pending.size >= (this.options.maxPending ?? 10_000)) {
      this.dropped += 1;
    } else {
      const { at, ...rest } = denial;
      this.pending.set(key, { ...rest, count: 1, firstAt: at, lastAt: at });
    }
    this.timer ??= setTimeout(() => void this.flush(), this.options.flushMs ?? 100);
  }

  /** flush reports what is pending now (awaiting any report still running first). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = [...this.pending.values()];
    this.pending.clear();
    this.flushing = this.flushing.then(async () => {
      if (batch.length === 0) return;
      try {
        await this.report(batch);
      } catch (err) {
        this.options.onError?.(err);
      }
    });
    return this.flushing;
  }
}
