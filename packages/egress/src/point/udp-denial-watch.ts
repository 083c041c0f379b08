import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { NFT_TABLE, UDP_DENIED_SET } from './nft-ruleset.js';

/** How often the kernel's set of refused UDP flows is read while any sandbox has a link. */
const POLL_MS = 500;

interface SetElement {
  elem?: { val?: { concat?: unknown[] }; expires?: number };
  concat?: unknown[];
}

/**
 * UdpDenialWatch reports the UDP flows the kernel refused (nft-ruleset.ts adds each sandbox
 * address . destination . port to a set for a minute as it drops it): every half second it reads
 * the set and reports each flow it has not reported in this minute. A flow is one report per
 * minute, whatever its datagram count: the kernel does the collapsing. The set is read through
 * one long-lived `nft -j -i` (a spawn per read cost the point ~17 ms of CPU each, measured).
 */
export class UdpDenialWatch {
  private timer: NodeJS.Timeout | null = null;
  private nft: ChildProcessWithoutNullStreams | null = null;
  private waiting: ((line: string | null) => void)[] = [];
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
      this.nft?.stdin.end();
      this.nft = null;
    }
  }

  /** ask sends one command to the interactive nft and resolves with its one-line JSON answer. */
  private ask(command: string): Promise<string | null> {
    if (!this.nft) {
      const nft = spawn('nft', ['-j', '-i'], { env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' } });
      nft.on('error', (err) => this.onError?.(err));
      nft.stderr.on('data', () => undefined);
      createInterface({ input: nft.stdout }).on('line', (line) => this.waiting.shift()?.(line));
      nft.once('exit', () => {
        if (this.nft === nft) this.nft = null;
        for (const resolve of this.waiting.splice(0)) resolve(null);
      });
      this.nft = nft;
    }
    const nft = this.nft;
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      nft.stdin.write(`${command}\n`);
    });
  }

  async poll(): Promise<void> {
    if (this.waiting.length > 0) return; // the last read is still out
    const line = await this.ask(`list set inet ${NFT_TABLE} ${UDP_DENIED_SET}`);
    let elements: SetElement[];
    try {
      if (line === null) throw new Error('nft -i exited');
      const doc = JSON.parse(line) as { nftables: { set?: { elem?: SetElement[] } }[] };
      elements = doc.nftables.find((entry) => entry.set)?.set?.elem ?? [];
    } catch (err) {
      this.onError?.(err);
      return;
    }
    const now = Date.now();
    for (const [key, until] of this.seen) if (until <= now) this.seen.delete(key);
    for (const element of elements) {
      const parts = element.elem?.val?.concat ?? element.concat;
      if (!Array.isArray(parts) || parts.length !== 3) continue;
      const [source, ip, port] = parts as [string, string, number];
      const key = `${source} ${ip} ${port}`;
      if (this.seen.has(key)) continue;
      this.seen.set(key, now + (element.elem?.expires ?? 60) * 1000);
      this.onDenied(source, ip, Number(port));
    }
  }
}
