import { randomBytes } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import type { RelayedConnection } from './splice-relay.js';

/** How long a link's listener waits for a connection's first bytes (sandbox-attachment.ts). */
export interface PeekWaits {
  webPorts: number[];
  webMs: number;
  otherMs: number;
}

/** The relay's side of a connection waiting for the point's verdict (splice-relay.ts). */
export interface VerdictChannel {
  send(line: string): void;
  /** track registers `cid` so its `closed` line resolves the returned promise. */
  track(cid: string): RelayedConnection;
  handBack: HandBack;
}

/**
 * AcceptedConnection is a sandbox connection the egress relay accepted on a link and holds until
 * the point's verdict: its source, original destination and the first bytes read so far
 * (`final`: no more will come). Exactly one of more/allow/refuse/answer/hand is called.
 */
export class AcceptedConnection {
  constructor(
    readonly cid: string,
    readonly src: { ip: string; port: number },
    readonly dst: { ip: string; port: number },
    readonly first: Buffer,
    readonly final: boolean,
    private readonly channel: VerdictChannel,
  ) {}

  /** more asks for the next bytes: the point is asked again with everything read so far. */
  more(): void {
    this.channel.send(`more ${this.cid}\n`);
  }

  /** allow has the relay dial the destination, send the first bytes and join the two. */
  allow(): RelayedConnection {
    const relayed = this.channel.track(this.cid);
    this.channel.send(`allow ${this.cid}\n`);
    return relayed;
  }

  /** refuse resets the sandbox's side. */
  refuse(): void {
    this.channel.send(`refuse ${this.cid}\n`);
  }

  /** answer sends `bytes` (an HTTP 403) and closes. */
  answer(bytes: Buffer): void {
    this.channel.send(`answer ${this.cid} ${bytes.toString('base64')}\n`);
  }

  /**
   * hand brings the connection back into this process (TLS terminated here for a bound
   * credential): a loopback socket whose bytes are the sandbox's after `first`; null when the
   * relay did not come back.
   */
  hand(): Promise<Socket | null> {
    return this.channel.handBack.expect((port, token) =>
      this.channel.send(`hand ${this.cid} ${port} ${token}\n`),
    );
  }
}

/** How long a handed-back connection may take to arrive. */
const HAND_BACK_MS = 10_000;

/**
 * HandBack is the point's loopback listener for connections the relay brings back: each starts
 * with a one-time token line naming the connection it is.
 */
export class HandBack {
  private server: Promise<{ server: Server; port: number }> | null = null;
  private readonly expected = new Map<string, (socket: Socket | null) => void>();

  private listening(): Promise<{ server: Server; port: number }> {
    this.server ??= new Promise<{ server: Server; port: number }>((resolve, reject) => {
      const server = createServer((socket) => this.arrived(socket));
      server.unref();
      server.once('error', reject);
      server.listen({ host: '127.0.0.1', port: 0 }, () => {
        const address = server.address();
        resolve({ server, port: typeof address === 'object' && address ? address.port : 0 });
      });
    });
    return this.server;
  }

  async expect(ask: (port: number, token: string) => void): Promise<Socket | null> {
    const { port } = await this.listening();
    const token = randomBytes(16).toString('hex');
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.expected.delete(token);
        resolve(null);
      }, HAND_BACK_MS);
      this.expected.set(token, (socket) => {
        clearTimeout(timer);
        resolve(socket);
      });
      ask(port, token);
    });
  }

  private arrived(socket: Socket): void {
    socket.on('error', () => undefined);
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf(10);
      if (end < 0) {
        if (head.length > 64) socket.destroy();
        return;
      }
      socket.off('data', onData);
      socket.pause();
      const found = this.expected.get(head.subarray(0, end).toString('latin1'));
      if (!found) return void socket.destroy();
      this.expected.delete(head.subarray(0, end).toString('latin1'));
      if (end + 1 < head.length) socket.unshift(head.subarray(end + 1));
      socket.setNoDelay(true);
      found(socket);
    };
    socket.on('data', onData);
  }

  close(): void {
    for (const resolve of this.expected.values()) resolve(null);
    this.expected.clear();
    void this.server?.then(({ server }) => server.close());
  }
}
