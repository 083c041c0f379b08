import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, type Server, type Socket } from 'node:net';
import type { EffectiveEgressPolicy } from '@cubicle/contract/api';
import { originalDestination } from '@cubicle/unix-peer';
import { DNS_PORT, INTERCEPT_PORT, type LinkPlan } from './link-plan.js';
import { peekDestination, type Peeked } from './peek-destination.js';
import { SandboxGate, type AttachmentContext, type Peer } from './sandbox-gate.js';
import { NETNS_DIR } from './sandbox-link.js';
import { SocketOwners } from './socket-owner.js';

export type { AttachmentContext } from './sandbox-gate.js';

/**
 * How long the egress point waits for a connection's first bytes before judging it by address
 * alone: a client speaks first on web ports (TLS, HTTP), a server first elsewhere (SSH, SMTP),
 * where the wait is the cost of looking.
 */
export const firstBytesWaitMs = (port: number) =>
  [80, 443, 8080, 8443].includes(port) ? 10_000 : 300;

/**
 * SandboxAttachment is the local egress point's side of one sandbox link: a SandboxGate (the
 * sandbox's policy, resolver and judge) behind the link's listeners — DNS on UDP and TCP port 53
 * of the link's host address, and the TCP listener that receives every connection the sandbox
 * opens (nftables redirect) with its original destination. It names the process behind a
 * denial from the link's network namespace.
 */
export class SandboxAttachment extends SandboxGate {
  private servers: { udp: UdpSocket; dnsTcp: Server; intercept: Server } | null = null;
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
    this.closeConnections();
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
    const dnsTcp = createServer((socket) => serveDnsTcp(socket, this));
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
