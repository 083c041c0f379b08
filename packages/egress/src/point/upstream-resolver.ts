import { Resolver } from 'node:dns/promises';

export type UpstreamAnswer =
  | { kind: 'addresses'; addresses: string[]; ttl: number }
  | { kind: 'nxdomain' }
  | { kind: 'nodata' }
  | { kind: 'failed'; reason: string };

/**
 * UpstreamResolver asks the installation's resolvers (the host's, or the fake internet's in
 * tests) for A records, with a small cache that honours the answers' TTL within [5 s, 5 min].
 * Only IPv4 is asked: sandboxes have no IPv6 (see README).
 */
export class UpstreamResolver {
  private readonly resolver: Resolver;
  private readonly cache = new Map<string, { answer: UpstreamAnswer; until: number }>();

  constructor(servers: string[]) {
    this.resolver = new Resolver({ timeout: 2000, tries: 2 });
    if (servers.length > 0) this.resolver.setServers(servers);
  }

  async resolve4(name: string): Promise<UpstreamAnswer> {
    const hit = this.cache.get(name);
    if (hit && hit.until > Date.now()) return hit.answer;
    let answer: UpstreamAnswer;
    let ttl = 5;
    try {
      const records = await this.resolver.resolve4(name, { ttl: true });
      ttl = Math.min(300, Math.max(5, Math.min(...records.map((r) => r.ttl))));
      answer = { kind: 'addresses', addresses: records.map((r) => r.address), ttl };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOTFOUND') answer = { kind: 'nxdomain' };
      else if (code === 'ENODATA') answer = { kind: 'nodata' };
      else return { kind: 'failed', reason: code ?? 'error' };
    }
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(name, { answer, until: Date.now() + ttl * 1000 });
    return answer;
  }

  close(): void {
    this.resolver.cancel();
  }
}
