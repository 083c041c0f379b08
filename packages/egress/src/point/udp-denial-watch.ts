import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { NFT_TABLE, UDP_DENIED_SET } from './nft-ruleset.js';

const run = promisify(execFile);

/** How often the kernel's set of refused UDP flows is read while any sandbox has a link. */
const POLL_MS = 500;

interface SetElement {
  elem?: { val?: { concat?: unknown[] }; expires?: number };
}

/**
 * UdpDenialWatch reports the UDP flows the kernel refused (nft-ruleset.ts adds each sandbox
 * address . destination . port to a set for a minute as it drops it): every half second it reads
 * the set and reports each flow it has not reported in this minute. A flow is one report per
 * minute, whatever its datagram count: the kernel does the collapsing.
 */
export class UdpDenialWatch {
  private timer: NodeJS.Timeout | null = null;
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly onDenied: (sandboxAddress: string, ip: string, port: number) => void,
    private readonly onError?: (err: unknown) => void,
  ) {}

  setActive(active: boolean): void {
    if (active && !this.timer) {
      this.timer = setInterval(() => void this.poll(), POLL_MS);
      this.timer.unref();
    } else if (!active && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  async poll(): Promise<void> {
    let elements: unknown[];
    try {
      const { stdout } = await run(
        'nft',
        ['-j', 'list', 'set', 'inet', NFT_TABLE, UDP_DENIED_SET],
        {
          env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' },
        },
      );
      const doc = JSON.parse(stdout) as { nftables: { set?: { elem?: unknown[] } }[] };
      elements = doc.nftables.find((entry) => entry.set)?.set?.elem ?? [];
    } catch (err) {
      this.onError?.(err);
      return;
    }
    const now = Date.now();
    for (const [key, until] of this.seen) if (until <= now) this.seen.delete(key);
    for (const element of elements as SetElement[]) {
      const parts = element.elem?.val?.concat ?? (element as { concat?: unknown[] }).concat;
      if (!Array.isArray(parts) || parts.length !== 3) continue;
      const [source, ip, port] = parts as [string, string, number];
      const key = `${source} ${ip} ${port}`;
      if (this.seen.has(key)) continue;
      const expiresMs = (element.elem?.expires ?? 60) * 1000;
      this.seen.set(key, now + expiresMs);
      this.onDenied(source, ip, Number(port));
    }
  }
}
