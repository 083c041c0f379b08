import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, type Server, type Socket } from 'node:net';
import type { EffectiveEgressPolicy } from '@cubicle/contract/api';
import { originalDestination } from '@cubicle/unix-peer';
import { DNS_PORT, INTERCEPT_PORT, type LinkPlan } from './link-plan.js';
import { peekDestination, type Peeked } from './peek-destination.js';
import type { AcceptedConnection } from './relay-accept.js';
import { forbidden, SandboxGate, type AttachmentContext, type Peer } from './sandbox-gate.js';
import { NETNS_DIR } from './sandbox-link.js';
import { SocketOwners } from './socket-owner.js';

export type { AttachmentContext } from './sandbox-gate.js';

/**
 * How long the egress point waits for a connection's first bytes before judging it by address
 * alone: a client speaks first on web ports (TLS, HTTP), a server first elsewhere (SSH, SMTP),
 * where the wait is the cost of looking.
 */
export const firstBytesWaitMs = (port: number) => (WEB_PORTS.includes(port) ? 10_000 : 300);
const WEB_PORTS = [80, 443, 8080, 8443];

/**
 * SandboxAttachment is the local egress point's side of one sandbox link: a SandboxGate (the
 * sandbox's policy, resolver and judge) behind the link's listeners — DNS on UDP and TCP port 53
 * of the link's host address, and the TCP listener that receives every connection the sandbox
 * opens (nftables redirect) with its original destination. It names the process behind a
 * denial from the link's network namespace.
 */
export class SandboxAttachment extends SandboxGate {
  private servers: { udp: UdpSocket; dnsTcp: Server; intercept: Server | null } | null = null;
  /** The egress relay's listener for this link (its lid), when the relay accepts here. */
  private relayed: { lid: string; unhook: () => void } | null = null;
  /** Names the process behind a denied connection or query (denial reports' `process`). */
  private readonly owners: SocketOwners;

  private constructor(
    desktopId: string,
    readonly plan: LinkPlan,
    policy: EffectiveEgressPolicy,
    ctx: AttachmentContext,
  ) {
    super(desktopId, policy, ctx);
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

  get desktopId(): string {
    return this.id;
  }

  async close(): Promise<void> {
    const relayed = this.relayed;
    this.relayed = null;
    relayed?.unhook();
    if (relayed) await this.ctx.relay?.unlisten(relayed.lid);
    this.closeConnections();
    const servers = this.servers;
    this.servers = null;
    if (!servers) return;
    servers.udp.close();
    await Promise.all(
      [servers.dnsTcp, servers.intercept].map(
        (server) =>
          new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())),
      ),
    );
  }

  /**
   * listenIntercept serves the link's intercept port: through the egress relay when it runs (it
   * accepts, peeks and splices; this process judges each connection once), else in Node. A
   * relay that stops hands the port back to Node.
   */
  private async listenIntercept(): Promise<void> {
    const relay = this.ctx.relay;
    const waits = {
      webPorts: WEB_PORTS,
      webMs: firstBytesWaitMs(443),
      otherMs: firstBytesWaitMs(0),
    };
    const lid = relay?.isAlive
      ? await relay.listen(this.plan.hostAddress, INTERCEPT_PORT, waits, (c) => this.accepted(c))
      : null;
    if (lid && relay) {
      const unhook = relay.onStop(() => {
        if (this.relayed?.lid !== lid || !this.servers) return;
        this.relayed = null;
        void this.listenInNode().catch(() => undefined);
      });
      this.relayed = { lid, unhook };
      return;
    }
    await this.listenInNode();
  }

  private async listenInNode(): Promise<void> {
    if (!this.servers) return;
    const intercept = createServer({ allowHalfOpen: true }, (socket) => this.intercept(socket));
    this.servers.intercept = intercept;
    await new Promise<void>((resolve, reject) => {
      intercept.once('error', reject);
      intercept.listen({ port: INTERCEPT_PORT, host: this.plan.hostAddress, backlog: 1024 }, () =>
        resolve(),
      );
    });
  }

  /** accepted judges a connection the relay holds, from the first bytes it sent (peeked here). */
  private accepted(connection: AcceptedConnection): void {
    const peeked = peekDestination(connection.first);
    if (peeked.kind === 'more' && !connection.final) return connection.more();
    void this.judgeAccepted(connection, peeked.kind === 'more' ? { kind: 'other' } : peeked);
  }

  private async judgeAccepted(connection: AcceptedConnection, peeked: Peeked): Promise<void> {
    const { src, dst, first } = connection;
    const spoken = peeked.kind === 'tls' || peeked.kind === 'http' ? peeked.name : null;
    const { attempt, decision } = await this.decide(dst.ip, dst.port, spoken);
    if (!decision.allowed) {
      // Looked up before refusing: the relay holds the sandbox's socket until the verdict.
      const owner = await this.ownerOf({ protocol: 'tcp', ip: src.ip, port: src.port });
      this.deny('tcp', attempt.name ?? null, dst.ip, dst.port, decision, owner);
      if (peeked.kind === 'http') connection.answer(Buffer.from(forbidden(decision.rule)));
      else connection.refuse();
      return;
    }
    this.allowed(attempt, decision);
    const injection = this.injectionFor(peeked);
    if (injection) {
      const socket = await connection.hand();
      if (socket) await this.inject(socket, attempt, first, spoken!, injection);
      return;
    }
    const relayed = connection.allow();
    this.track({ attempt, cut: () => relayed.cut() }, relayed.closed);
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
    const dnsTcp = createServer((socket) => serveDnsTcp(socket, this));
    this.servers = { udp, dnsTcp, intercept: null };
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(DNS_PORT, host, () => resolve());
    });
    await new Promise<void>((resolve, reject) => {
      dnsTcp.once('error', reject);
      dnsTcp.listen({ port: DNS_PORT, host, backlog: 1024 }, () => resolve());
    });
    await this.listenIntercept();
  }

  /** ownerOf names the sandbox process behind a socket of the sandbox (null: unknown). */
  protected override ownerOf(peer: Peer | undefined): Promise<string | null> {
    if (!peer) return Promise.resolve(null);
    return this.owners.ownerOf(peer.protocol, peer.ip.replace(/^::ffff:/, ''), peer.port);
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
    readFirstBytes(
      client,
      firstBytesWaitMs(port),
      (first, peeked) => void this.judge(client, ip, port, first, peeked),
    );
  }
}

/**
 * readFirstBytes reads a connection's first bytes until they name a destination (SNI, Host) or
 * cannot, or `waitMs` passes, then hands them over with the socket paused.
 */
export function readFirstBytes(
  client: Socket,
  waitMs: number,
  then: (first: Buffer, peeked: Peeked) => void,
  already: Buffer = Buffer.alloc(0),
): void {
  const chunks: Buffer[] = already.length > 0 ? [already] : [];
  let done = false;
  const finish = (peeked: Peeked) => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    client.off('data', onData);
    client.pause();
    then(Buffer.concat(chunks), peeked);
  };
  const onData = (chunk: Buffer) => {
    chunks.push(chunk);
    const peeked = peekDestination(chunks.length === 1 ? chunk : Buffer.concat(chunks));
    if (peeked.kind !== 'more') finish(peeked);
  };
  const timer = setTimeout(() => finish({ kind: 'other' }), waitMs);
  client.on('data', onData);
  client.once('end', () => finish({ kind: 'other' }));
  client.once('close', () => {
    done = true;
    clearTimeout(timer);
  });
  if (chunks.length > 0) {
    const peeked = peekDestination(chunks[0]!);
    if (peeked.kind !== 'more') finish(peeked);
  }
}

/** serveDnsTcp answers DNS over TCP (length-prefixed messages) through `gate`. */
export function serveDnsTcp(socket: Socket, gate: Pick<SandboxGate, 'answer'>): void {
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
      void gate.answer(message, peer).then((reply) => {
        if (!reply || socket.destroyed) return;
        const length = Buffer.alloc(2);
        length.writeUInt16BE(reply.length);
        socket.write(Buffer.concat([length, reply]));
      });
    }
    if (buffered.length > 70_000) socket.destroy();
  });
}
