import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { EffectiveEgressPolicy } from '@cubicle/contract/api';
import { originalDestination } from '@cubicle/unix-peer';
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
import { DNS_PORT, INTERCEPT_PORT, type LinkPlan } from './link-plan.js';
import { peekDestination, type Peeked } from './peek-destination.js';
import { NETNS_DIR } from './sandbox-link.js';
import { SocketOwners } from './socket-owner.js';
import type { UpstreamResolver } from './upstream-resolver.js';

/** What every sandbox's attachment shares, from the egress point. */
export interface AttachmentContext {
  resolver: UpstreamResolver;
  /** Terminates TLS for hosts with a bound credential (null: none configured). */
  injector: CredentialInjector | null;
  report(denial: Omit<EgressDenial, 'desktopId' | 'at'>, desktopId: string): void;
  /** The last word before a packet leaves: false refuses (tests keep traffic on the machine). */
  isUpstreamAllowed(ip: string): boolean;
}

/**
 * How long the egress point waits for a connection's first bytes before judging it by address
 * alone: a client speaks first on web ports (TLS, HTTP), a server first elsewhere (SSH, SMTP),
 * where the wait is the cost of looking.
 */
const firstBytesWaitMs = (port: number) => ([80, 443, 8080, 8443].includes(port) ? 10_000 : 300);
/** How long a name the resolver answered stays attached to its addresses. */
const NAME_MEMORY_MS = 10 * 60_000;

interface LiveConnection {
  client: Socket;
  upstream: Socket;
  attempt: ConnectionAttempt;
  /** The credential this connection's requests carry (TLS terminated for it), if any. */
  injection?: CredentialInjection;
}

const refused = (rule: string): Decision => ({ allowed: false, rule });

/** A socket of the sandbox, as the point sees it connect (its local address inside). */
interface Peer {
  protocol: 'tcp' | 'udp';
  ip: string;
  port: number;
}

/**
 * SandboxAttachment is the egress point's side of one sandbox link: its resolver (UDP and TCP on
 * port 53 of the link's host address) and its TCP listener, which receives every connection the
 * sandbox opens (nftables redirect) and splices it to where it was going when the sandbox's
 * policy allows, judged by SNI, Host or the name the resolver gave that address. The policy can
 * be replaced at any time (setPolicy): later queries and connections use the new one at once,
 * and open connections it no longer allows are cut.
 */
export class SandboxAttachment {
  private readonly names = new Map<string, Map<string, number>>();
  private readonly live = new Set<LiveConnection>();
  private servers: { udp: UdpSocket; dnsTcp: Server; intercept: Server } | null = null;
  /** Credentials bound to hosts for this sandbox (setInjections). */
  private injections: CredentialInjection[] = [];
  /** Names the process behind a denied connection or query (denial reports' `process`). */
  private readonly owners: SocketOwners;

  private constructor(
    readonly desktopId: string,
    readonly plan: LinkPlan,
    private policy: EffectiveEgressPolicy,
    private readonly ctx: AttachmentContext,
  ) {
    this.owners = new SocketOwners(`${NETNS_DIR}/${plan.netns}`);
  }

  static async open(
    desktopId: string,
    plan: LinkPlan,
    policy: EffectiveEgressPolicy,
    ctx: AttachmentContext,
  ): Promise<SandboxAttachment> {
    const attachment = new SandboxAttachment(desktopId, plan, policy, ctx);
    await attachment.listen();
    return attachment;
  }

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
      connection.upstream.destroy();
      connection.client.destroy();
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
      connection.upstream.destroy();
      connection.client.resetAndDestroy();
    }
  }

  async close(): Promise<void> {
    for (const connection of this.live) {
      connection.upstream.destroy();
      connection.client.destroy();
    }
    const servers = this.servers;
    this.servers = null;
    if (!servers) return;
    servers.udp.close();
    await Promise.all(
      [servers.dnsTcp, servers.intercept].map(
        (server) => new Promise<void>((resolve) => server.close(() => resolve())),
      ),
    );
  }

  private async listen(): Promise<void> {
    const host = this.plan.hostAddress;
    const udp = createSocket('udp4');
    udp.on('message', (message, peer) => {
      void this.answer(message, { protocol: 'udp', ip: peer.address, port: peer.port }).then(
        (reply) => {
          if (reply) udp.send(reply, peer.port, peer.address);
        },
      );
    });
    udp.on('error', () => undefined);
    const dnsTcp = createServer((socket) => this.serveDnsTcp(socket));
    const intercept = createServer({ allowHalfOpen: true }, (socket) => this.intercept(socket));
    this.servers = { udp, dnsTcp, intercept };
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(DNS_PORT, host, () => resolve());
    });
    for (const [server, port] of [
      [dnsTcp, DNS_PORT],
      [intercept, INTERCEPT_PORT],
    ] as const) {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen({ port, host, backlog: 1024 }, () => resolve());
      });
    }
  }

  private deny(
    protocol: EgressDenial['protocol'],
    name: string | null,
    ip: string | null,
    port: number | null,
    decision: Decision,
    process: string | null = null,
  ): void {
    this.ctx.report({ protocol, name, ip, port, rule: decision.rule, process }, this.desktopId);
  }

  /** ownerOf names the sandbox process behind a socket of the sandbox (null: unknown). */
  private ownerOf(peer: Peer | undefined): Promise<string | null> {
    if (!peer) return Promise.resolve(null);
    return this.owners.ownerOf(peer.protocol, peer.ip.replace(/^::ffff:/, ''), peer.port);
  }

  /**
   * answer resolves one DNS query under the sandbox's policy (null: nothing to send); `peer`,
   * the query's source in the sandbox, names the asking process in a denial.
   */
  async answer(message: Buffer, peer?: Peer): Promise<Buffer | null> {
    const q = parseQuery(message);
    if (!q) return buildFormErr(message);
    if (!q.name || q.class !== 1) return buildAnswer(q, DNS_RCODE.REFUSED);
    const policy = this.policy;
    let decision: Decision;
    try {
      decision = decideName(policy, q.name);
    } catch {
      return buildAnswer(q, DNS_RCODE.FORMERR);
    }
    if (!decision.allowed) {
      // Looked up before answering: the asking socket is open until the answer arrives.
      this.deny('dns', q.name, null, null, decision, await this.ownerOf(peer));
      return buildAnswer(q, DNS_RCODE.NXDOMAIN);
    }
    // IPv6 is off in sandboxes, and other types are not needed to connect: NODATA.
    if (q.type !== DNS_TYPE.A) return buildAnswer(q, DNS_RCODE.NOERROR, []);
    const upstream = await this.ctx.resolver.resolve4(q.name);
    switch (upstream.kind) {
      case 'nxdomain':
        return buildAnswer(q, DNS_RCODE.NXDOMAIN);
      case 'nodata':
        return buildAnswer(q, DNS_RCODE.NOERROR, []);
      case 'failed':
        return buildAnswer(q, DNS_RCODE.SERVFAIL);
      case 'addresses': {
        // Rebinding: an allowed name answering a private or metadata address is refused here.
        const filtered = filterAnswers(policy, q.name, upstream.addresses);
        for (const { ip, decision: why } of filtered.refused)
          this.deny('dns', q.name, ip, null, why);
        if (filtered.kept.length === 0) return buildAnswer(q, DNS_RCODE.NXDOMAIN);
        this.remember(q.name, filtered.kept);
        return buildAnswer(q, DNS_RCODE.NOERROR, filtered.kept, upstream.ttl);
      }
      default:
        return upstream satisfies never;
    }
  }

  private serveDnsTcp(socket: Socket): void {
    let buffered = Buffer.alloc(0);
    socket.on('error', () => undefined);
    socket.setTimeout(10_000, () => socket.destroy());
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        const message = buffered.subarray(2, 2 + buffered.readUInt16BE(0));
        buffered = buffered.subarray(2 + message.length);
        const peer = {
          protocol: 'tcp' as const,
          ip: socket.remoteAddress ?? '',
          port: socket.remotePort ?? 0,
        };
        void this.answer(message, peer).then((reply) => {
          if (!reply || socket.destroyed) return;
          const length = Buffer.alloc(2);
          length.writeUInt16BE(reply.length);
          socket.write(Buffer.concat([length, reply]));
        });
      }
      if (buffered.length > 70_000) socket.destroy();
    });
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

  private intercept(client: Socket): void {
    client.on('error', () => undefined);
    let destination;
    try {
      destination = originalDestination(client);
    } catch {
      destination = null;
    }
    // Connected to the listener itself: nowhere to go.
    if (!destination) return void client.destroy();
    const { address: ip, port } = destination;
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (peeked: Peeked) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      client.off('data', onData);
      client.pause();
      void this.judge(client, ip, port, Buffer.concat(chunks), peeked);
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      const peeked = peekDestination(chunks.length === 1 ? chunk : Buffer.concat(chunks));
      if (peeked.kind !== 'more') finish(peeked);
    };
    const timer = setTimeout(() => finish({ kind: 'other' }), firstBytesWaitMs(port));
    client.on('data', onData);
    client.once('end', () => finish({ kind: 'other' }));
    client.once('close', () => {
      done = true;
      clearTimeout(timer);
    });
  }

  private async judge(client: Socket, ip: string, port: number, first: Buffer, peeked: Peeked) {
    const policy = this.policy;
    const spoken = peeked.kind === 'tls' || peeked.kind === 'http' ? peeked.name : null;
    const attempt: ConnectionAttempt = {
      name: spoken ?? this.nameOf(ip),
      ip,
      port,
      protocol: 'tcp',
    };
    let decision = decideConnection(policy, attempt);
    // A name the sandbox states (SNI, Host) opens only the addresses that name has.
    if (decision.allowed && spoken && !decideConnection(policy, { ...attempt, name: null }).allowed)
      if (!(await this.isNameAt(spoken, ip))) decision = refused('egress:name-not-at-address');
    if (decision.allowed && !this.ctx.isUpstreamAllowed(ip))
      decision = refused('egress:upstream-guard');
    if (client.destroyed) return;
    if (!decision.allowed) {
      // Looked up before refusing: the sandbox's socket still exists while this one is open.
      const owner = await this.ownerOf({
        protocol: 'tcp',
        ip: client.remoteAddress ?? '',
        port: client.remotePort ?? 0,
      });
      this.deny('tcp', attempt.name ?? null, ip, port, decision, owner);
      if (peeked.kind === 'http') {
        const body = `Blocked by Cubicle's egress policy (${decision.rule}).\n`;
        client.end(
          `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nconnection: close\r\n` +
            `x-cubicle-egress-rule: ${encodeURIComponent(decision.rule)}\r\n` +
            `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        );
      } else {
        client.resetAndDestroy();
      }
      return;
    }
    this.ctx.report(
      {
        verdict: 'allowed',
        protocol: 'tcp',
        name: attempt.name ?? null,
        ip,
        port,
        rule: decision.rule,
        process: null,
      },
      this.desktopId,
    );
    const injection =
      peeked.kind === 'tls' && spoken && this.ctx.injector
        ? this.injections.find((i) => i.hosts.includes(spoken))
        : undefined;
    if (injection) return this.inject(client, attempt, first, spoken!, injection);
    this.splice(client, attempt, first);
  }

  /** inject hands a bound host's connection to the injector (TLS terminated for it alone). */
  private async inject(
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
        client,
        upstream: secure as unknown as Socket,
        attempt,
        injection,
      };
      this.live.add(connection);
      client.once('close', () => this.live.delete(connection));
    } catch {
      client.resetAndDestroy();
    }
  }

  private splice(client: Socket, attempt: ConnectionAttempt, first: Buffer): void {
    const upstream = connect({
      host: attempt.ip,
      port: attempt.port,
      allowHalfOpen: true,
      noDelay: true,
    });
    const connection: LiveConnection = { client, upstream, attempt };
    this.live.add(connection);
    client.setNoDelay(true);
    upstream.on('error', () => {
      if (!client.destroyed) client.resetAndDestroy();
    });
    client.on('error', () => upstream.destroy());
    // One side closing ends the other once its writes are flushed (pipe has ended it already when
    // the close was orderly); an idle half is cut after a while rather than held open.
    const closed = (other: Socket) => () => {
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
  }
}
