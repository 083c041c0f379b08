import { connect, type Socket } from 'node:net';
import type { EffectiveEgressPolicy } from '@cubicle/contract/api';
import {
  decideConnection,
  decideName,
  filterAnswers,
  type ConnectionAttempt,
  type Decision,
} from '../policy/index.js';
import type { EgressDenial } from './denial-batcher.js';
import type { CredentialInjection, CredentialInjector } from './inject-credentials.js';
import { buildAnswer, buildFormErr, DNS_RCODE, DNS_TYPE, parseQuery } from './dns-wire.js';
import type { Peeked } from './peek-destination.js';
import { takeBuffered, type RelayedConnection, type SpliceRelay } from './splice-relay.js';
import type { UpstreamResolver } from './upstream-resolver.js';

/** What every sandbox's gate shares, from its egress point (local or Kubernetes). */
export interface AttachmentContext {
  resolver: UpstreamResolver;
  /** Terminates TLS for hosts with a bound credential (null: none configured). */
  injector: CredentialInjector | null;
  report(denial: Omit<EgressDenial, 'desktopId' | 'at'>, desktopId: string): void;
  /** The last word before a packet leaves: false refuses (tests keep traffic on the machine). */
  isUpstreamAllowed(ip: string): boolean;
  /** Moves spliced connections' bytes in the kernel (local point); without it Node pipes them. */
  relay?: SpliceRelay | null;
}

/** How long a name the resolver answered stays attached to its addresses. */
const NAME_MEMORY_MS = 10 * 60_000;

export interface LiveConnection {
  attempt: ConnectionAttempt;
  /** The credential this connection's requests carry (TLS terminated for it), if any. */
  injection?: CredentialInjection;
  /** cut ends both sides; `reset` answers the sandbox's side with a reset (a policy refusal). */
  cut(reset: boolean): void;
}

const refused = (rule: string): Decision => ({ allowed: false, rule });

/** A socket of the sandbox, as the point sees it connect (its local address inside). */
export interface Peer {
  protocol: 'tcp' | 'udp';
  ip: string;
  port: number;
}

/** A name looked up under a sandbox's policy (NameLookup: what `lookup` found). */
export type NameLookup =
  | { kind: 'addresses'; addresses: string[]; ttl: number }
  | { kind: 'denied'; decision: Decision }
  | { kind: 'nxdomain' }
  | { kind: 'nodata' }
  | { kind: 'failed' };

/**
 * SandboxGate is one sandbox's policy at an egress point, whatever carries its traffic there: it
 * answers DNS queries (names decided, answers filtered against rebinding, the name behind each
 * address remembered), judges connections by the name they state (SNI, Host, a proxy's CONNECT
 * host) or the name the resolver gave their address, splices the allowed ones (or hands a bound
 * host's to the injector) and reports every refusal. The local point's SandboxAttachment adds a
 * link's listeners; the Kubernetes point (kube/) feeds it from its resolver and proxy ports.
 * The policy can be replaced at any time (setPolicy): later queries and connections use the new
 * one at once, and open connections it no longer allows are cut.
 */
export class SandboxGate {
  private readonly names = new Map<string, Map<string, number>>();
  protected readonly live = new Set<LiveConnection>();
  /** Credentials bound to hosts for this sandbox (setInjections). */
  private injections: CredentialInjection[] = [];

  constructor(
    /** The id denials are reported under (the local desktop id, the Kubernetes sandbox id). */
    readonly id: string,
    private policy: EffectiveEgressPolicy,
    protected readonly ctx: AttachmentContext,
  ) {}

  /**
   * setInjections replaces the credentials bound for this sandbox; open connections carrying a
   * credential that is no longer bound as it was (revoked, rotated, unbound) are cut, so a kept-
   * alive connection does not go on sending the old value.
   */
  setInjections(injections: CredentialInjection[]): void {
    this.injections = injections;
    const kept = new Set(injections.map((i) => JSON.stringify(i)));
    for (const connection of this.live) {
      if (!connection.injection || kept.has(JSON.stringify(connection.injection))) continue;
      connection.cut(false);
      this.live.delete(connection);
    }
  }

  get currentPolicy(): EffectiveEgressPolicy {
    return this.policy;
  }

  get connectionCount(): number {
    return this.live.size;
  }

  setPolicy(policy: EffectiveEgressPolicy): void {
    this.policy = policy;
    for (const connection of this.live) {
      const decision = decideConnection(policy, connection.attempt);
      if (decision.allowed) continue;
      this.deny(
        'tcp',
        connection.attempt.name ?? null,
        connection.attempt.ip,
        connection.attempt.port,
        decision,
      );
      connection.cut(true);
    }
  }

  /** closeConnections cuts every open connection (the sandbox is going away). */
  protected closeConnections(): void {
    for (const connection of this.live) connection.cut(false);
    this.live.clear();
  }

  /** deny reports one refusal under this sandbox's id. */
  deny(
    protocol: EgressDenial['protocol'],
    name: string | null,
    ip: string | null,
    port: number | null,
    decision: Decision,
    process: string | null = null,
  ): void {
    this.ctx.report({ protocol, name, ip, port, rule: decision.rule, process }, this.id);
  }

  /** ownerOf names the sandbox process behind a socket (null: unknown, as on Kubernetes). */
  protected ownerOf(_peer: Peer | undefined): Promise<string | null> {
    return Promise.resolve(null);
  }

  /**
   * lookup resolves `name` under the sandbox's policy: a refused name is reported and `denied`;
   * an allowed one is asked upstream and its answers filtered (rebinding: private, loopback,
   * metadata and host addresses are withheld and reported); the name behind each kept address
   * is remembered for judging connections to it. `peer` names the asking process in a denial;
   * `as` is what a refused name is reported as (a proxy's CONNECT is a connection to a port).
   */
  async lookup(
    name: string,
    peer?: Peer,
    as: { protocol: 'dns' | 'tcp'; port: number | null } = { protocol: 'dns', port: null },
  ): Promise<NameLookup> {
    const policy = this.policy;
    const decision = decideName(policy, name);
    if (!decision.allowed) {
      // Looked up before answering: the asking socket is open until the answer arrives.
      this.deny(as.protocol, name, null, as.port, decision, await this.ownerOf(peer));
      return { kind: 'denied', decision };
    }
    const upstream = await this.ctx.resolver.resolve4(name);
    if (upstream.kind !== 'addresses')
      return upstream.kind === 'failed' ? { kind: 'failed' } : upstream;
    const filtered = filterAnswers(policy, name, upstream.addresses);
    for (const { ip, decision: why } of filtered.refused) this.deny('dns', name, ip, null, why);
    if (filtered.kept.length === 0) return { kind: 'nxdomain' };
    this.remember(name, filtered.kept);
    return { kind: 'addresses', addresses: filtered.kept, ttl: upstream.ttl };
  }

  /**
   * answer resolves one DNS query under the sandbox's policy (null: nothing to send); `peer`,
   * the query's source in the sandbox, names the asking process in a denial.
   */
  async answer(message: Buffer, peer?: Peer): Promise<Buffer | null> {
    const q = parseQuery(message);
    if (!q) return buildFormErr(message);
    if (!q.name || q.class !== 1) return buildAnswer(q, DNS_RCODE.REFUSED);
    let decision: Decision;
    try {
      decision = decideName(this.policy, q.name);
    } catch {
      return buildAnswer(q, DNS_RCODE.FORMERR);
    }
    // IPv6 is off in sandboxes, and other types are not needed to connect: NODATA.
    if (decision.allowed && q.type !== DNS_TYPE.A) return buildAnswer(q, DNS_RCODE.NOERROR, []);
    const found = await this.lookup(q.name, peer);
    switch (found.kind) {
      case 'denied':
      case 'nxdomain':
        return buildAnswer(q, DNS_RCODE.NXDOMAIN);
      case 'nodata':
        return buildAnswer(q, DNS_RCODE.NOERROR, []);
      case 'failed':
        return buildAnswer(q, DNS_RCODE.SERVFAIL);
      case 'addresses':
        return buildAnswer(q, DNS_RCODE.NOERROR, found.addresses, found.ttl);
      default:
        return found satisfies never;
    }
  }

  private remember(name: string, addresses: readonly string[]): void {
    const until = Date.now() + NAME_MEMORY_MS;
    for (const ip of addresses) {
      let names = this.names.get(ip);
      if (!names) this.names.set(ip, (names = new Map()));
      names.delete(name); // re-inserted last: the most recent name wins in nameOf
      names.set(name, until);
      if (names.size > 64) names.delete(names.keys().next().value!);
    }
    if (this.names.size > 50_000) this.names.clear();
  }

  /** nameOf is the latest name the resolver gave `ip` to this sandbox (null: none known). */
  private nameOf(ip: string): string | null {
    let latest: string | null = null;
    for (const [name, until] of this.names.get(ip) ?? []) if (until > Date.now()) latest = name;
    return latest;
  }

  /** isNameAt checks that `name` (from SNI or Host) really has address `ip` (no fronting). */
  private async isNameAt(name: string, ip: string): Promise<boolean> {
    if ((this.names.get(ip)?.get(name) ?? 0) > Date.now()) return true;
    const answer = await this.ctx.resolver.resolve4(name);
    return answer.kind === 'addresses' && answer.addresses.includes(ip);
  }

  /**
   * decide judges a connection to `ip:port` under the current policy, by the name the sandbox
   * states (`spoken`: SNI, Host, a CONNECT host) or else the name the resolver gave that
   * address; a stated name opens only the addresses it has (no domain fronting), and nothing
   * passes the point's upstream guard that it refuses.
   */
  async decide(
    ip: string,
    port: number,
    spoken: string | null,
  ): Promise<{
    attempt: ConnectionAttempt;
    decision: Decision;
  }> {
    const policy = this.policy;
    const attempt: ConnectionAttempt = {
      name: spoken ?? this.nameOf(ip),
      ip,
      port,
      protocol: 'tcp',
    };
    let decision = decideConnection(policy, attempt);
    if (decision.allowed && spoken && !decideConnection(policy, { ...attempt, name: null }).allowed)
      if (!(await this.isNameAt(spoken, ip))) decision = refused('egress:name-not-at-address');
    if (decision.allowed && !this.ctx.isUpstreamAllowed(ip))
      decision = refused('egress:upstream-guard');
    return { attempt, decision };
  }

  /** allowed reports an allowed connection (counted for the Network tab, no event). */
  allowed(attempt: ConnectionAttempt, decision: Decision): void {
    this.ctx.report(
      {
        verdict: 'allowed',
        protocol: 'tcp',
        name: attempt.name ?? null,
        ip: attempt.ip,
        port: attempt.port,
        rule: decision.rule,
        process: null,
      },
      this.id,
    );
  }

  /**
   * judge decides a connection the sandbox opened to `ip:port` (`client` paused, its first bytes
   * `first` read and `peeked`), then refuses it (a 403 naming the rule to HTTP, else a reset),
   * splices it, or hands a bound host's connection to the injector.
   */
  async judge(client: Socket, ip: string, port: number, first: Buffer, peeked: Peeked) {
    const spoken = peeked.kind === 'tls' || peeked.kind === 'http' ? peeked.name : null;
    const { attempt, decision } = await this.decide(ip, port, spoken);
    if (client.destroyed) return;
    if (!decision.allowed) {
      // Looked up before refusing: the sandbox's socket still exists while this one is open.
      const owner = await this.ownerOf({
        protocol: 'tcp',
        ip: client.remoteAddress ?? '',
        port: client.remotePort ?? 0,
      });
      this.deny('tcp', attempt.name ?? null, ip, port, decision, owner);
      if (peeked.kind === 'http') client.end(forbidden(decision.rule));
      else client.resetAndDestroy();
      return;
    }
    this.allowed(attempt, decision);
    const injection = this.injectionFor(peeked);
    if (injection) return this.inject(client, attempt, first, spoken!, injection);
    this.splice(client, attempt, first);
  }

  /** injectionFor is the credential bound to a TLS connection's SNI (TLS terminated for it). */
  protected injectionFor(peeked: Peeked): CredentialInjection | undefined {
    const spoken = peeked.kind === 'tls' ? peeked.name : null;
    return spoken && this.ctx.injector
      ? this.injections.find((i) => i.hosts.includes(spoken))
      : undefined;
  }

  /** track keeps an open connection the policy may cut, until `closed`. */
  protected track(connection: LiveConnection, closed: Promise<void>): void {
    this.live.add(connection);
    void closed.then(() => this.live.delete(connection));
  }

  /** inject hands a bound host's connection to the injector (TLS terminated for it alone). */
  protected async inject(
    client: Socket,
    attempt: ConnectionAttempt,
    first: Buffer,
    host: string,
    injection: CredentialInjection,
  ): Promise<void> {
    try {
      const secure = await this.ctx.injector!.serve(
        client,
        first,
        { host, ip: attempt.ip, port: attempt.port },
        injection,
      );
      const connection: LiveConnection = {
        attempt,
        injection,
        cut: (reset) => {
          secure.destroy();
          if (reset) client.resetAndDestroy();
          else client.destroy();
        },
      };
      this.live.add(connection);
      client.once('close', () => this.live.delete(connection));
    } catch {
      client.resetAndDestroy();
    }
  }

  /**
   * splice connects to the destination, sends the bytes already read, and joins the two sockets
   * with Node's pipe. With a relay (splice-relay.ts), a connection that carries more than
   * RELAY_AFTER_BYTES is then handed to it and its bytes move in the kernel: a download or an
   * upload runs at the speed of the kernel's splice(2), while the many short connections (a
   * page's requests) never pay for a second process on their path.
   */
  private splice(client: Socket, attempt: ConnectionAttempt, first: Buffer): void {
    const upstream = connect({
      host: attempt.ip,
      port: attempt.port,
      allowHalfOpen: true,
      noDelay: true,
    });
    let relayed: RelayedConnection | null = null;
    let handing = false;
    let isCut = false;
    const connection: LiveConnection = {
      attempt,
      cut: (reset) => {
        isCut = true;
        if (relayed) return relayed.cut();
        upstream.destroy();
        if (reset) client.resetAndDestroy();
        else client.destroy();
      },
    };
    this.live.add(connection);
    client.setNoDelay(true);
    upstream.on('error', () => {
      if (!client.destroyed) client.resetAndDestroy();
    });
    client.on('error', () => upstream.destroy());
    // One side closing ends the other once its writes are flushed (pipe has ended it already when
    // the close was orderly); an idle half is cut after a while rather than held open. Once the
    // relay holds the connection, these are only this process's copies closing.
    const closed = (other: Socket) => () => {
      if (relayed || handing) return;
      if (client.destroyed && upstream.destroyed) this.live.delete(connection);
      if (other.destroyed) return;
      other.end();
      other.setTimeout(30_000, () => other.destroy());
    };
    upstream.once('close', closed(client));
    client.once('close', closed(upstream));
    // Written and piped at once: the socket sends them as soon as it connects, in the same turn.
    if (first.length > 0) upstream.write(first);
    client.pipe(upstream);
    upstream.pipe(client);
    client.resume();

    const relay = this.ctx.relay;
    if (!relay?.isAlive) return;
    let carried = first.length;
    const count = (chunk: Buffer) => {
      carried += chunk.length;
      if (carried < RELAY_AFTER_BYTES || handing) return;
      handing = true;
      client.off('data', count);
      upstream.off('data', count);
      void handOver();
    };
    client.on('data', count);
    upstream.on('data', count);
    const handOver = async (): Promise<void> => {
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pause();
      upstream.pause();
      const ended = () =>
        client.destroyed ||
        upstream.destroyed ||
        client.readableEnded ||
        upstream.readableEnded ||
        client.writableEnded ||
        upstream.writableEnded;
      // What Node holds of either direction goes out before the sockets change hands.
      const toUpstream = takeBuffered(client);
      const toClient = takeBuffered(upstream);
      await Promise.all([flushed(upstream, toUpstream), flushed(client, toClient)]);
      relayed = ended() || isCut ? null : await relay.hand(client, upstream);
      if (relayed) {
        client.destroy();
        upstream.destroy();
        void relayed.closed.then(() => this.live.delete(connection));
        if (isCut) relayed.cut();
        return;
      }
      // Not handed (the relay refused, or a side ended meanwhile): Node goes on piping.
      handing = false;
      if (client.destroyed || upstream.destroyed) {
        if (client.destroyed && upstream.destroyed) this.live.delete(connection);
        return;
      }
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
      upstream.resume();
    };
  }
}

/**
 * How much a spliced connection carries through Node before it is handed to the relay: past a
 * page's requests and answers, well before a download's bulk (bench:egress, 100 MB).
 */
const RELAY_AFTER_BYTES = 256 * 1024;

/** flushed writes `bytes` (if any) and resolves once everything written before is in the kernel. */
function flushed(socket: Socket, bytes: Buffer | null): Promise<void> {
  if (socket.destroyed || socket.writableEnded) return Promise.resolve();
  return new Promise((resolve) => socket.write(bytes ?? Buffer.alloc(0), () => resolve()));
}

/** forbidden is the HTTP answer to a refused request: which rule refused it. */
export function forbidden(rule: string): string {
  const body = `Blocked by Cubicle's egress policy (${rule}).\n`;
  return (
    `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nconnection: close\r\n` +
    `x-cubicle-egress-rule: ${encodeURIComponent(rule)}\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}
