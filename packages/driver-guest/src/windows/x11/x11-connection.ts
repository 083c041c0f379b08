import { createConnection, type Socket } from 'node:net';
import { findXAuthCookie } from './xauth.js';

/** X11Setup is the part of the server's connection reply the driver uses. */
export interface X11Setup {
  root: number;
  width: number;
  height: number;
  rootDepth: number;
  rootVisual: number;
  /** Bits per pixel of ZPixmap images at the root depth (32 for depth 24 on Xvfb). */
  bitsPerPixel: number;
  redMask: number;
  greenMask: number;
  blueMask: number;
  minKeycode: number;
  maxKeycode: number;
  isLittleEndianImage: boolean;
}

/** X11Error is an error packet from the server, tied to the request that caused it. */
export class X11Error extends Error {
  constructor(
    readonly errorCode: number,
    readonly badValue: number,
    readonly majorOpcode: number,
  ) {
    super(`X11 error ${errorCode} (request ${majorOpcode}, value 0x${badValue.toString(16)})`);
    this.name = 'X11Error';
  }
}

/** X11_BAD_WINDOW and X11_BAD_DRAWABLE are the errors for a window that is gone. */
export const X11_BAD_WINDOW = 3;
export const X11_BAD_DRAWABLE = 9;
export const X11_BAD_MATCH = 8;

interface Pending {
  seq: number;
  hasReply: boolean;
  resolve: (reply: Buffer | undefined) => void;
  reject: (err: Error) => void;
}

const pad4 = (n: number) => (4 - (n % 4)) % 4;

/**
 * X11Connection is a minimal X protocol client over the display's unix socket. It speaks only
 * the little-endian wire format and the handful of requests the driver needs; spawning
 * `import`/`xprop` per call costs ~100 ms, a request over an open socket well under 1 ms.
 * Replies are matched to requests by sequence number, in order, as the protocol guarantees.
 */
export class X11Connection {
  private seq = 0;
  private readonly pending: Pending[] = [];
  private chunks: Buffer[] = [];
  private buffered = 0;
  private closedError: Error | null = null;

  private constructor(
    private readonly socket: Socket,
    readonly setup: X11Setup,
  ) {
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (err) => this.fail(err));
    socket.on('close', () => this.fail(new Error('X11 connection closed')));
  }

  /** connect opens display `:N` (`:N.S` uses screen 0 regardless) through its unix socket. */
  static async connect(display: string, xauthority?: string): Promise<X11Connection> {
    const match = /^:(\d+)(?:\.\d+)?$/.exec(display);
    if (!match) throw new Error(`unsupported DISPLAY ${display}: only local :N displays`);
    const number = Number(match[1]);
    const cookie = await findXAuthCookie(number, xauthority);
    const socket = createConnection({ path: `/tmp/.X11-unix/X${number}` });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const name = Buffer.from(cookie?.name ?? '', 'latin1');
    const data = cookie?.data ?? Buffer.alloc(0);
    const hello = Buffer.alloc(
      12 + name.length + pad4(name.length) + data.length + pad4(data.length),
    );
    hello.writeUInt8(0x6c, 0); // 'l': little-endian
    hello.writeUInt16LE(11, 2);
    hello.writeUInt16LE(0, 4);
    hello.writeUInt16LE(name.length, 6);
    hello.writeUInt16LE(data.length, 8);
    name.copy(hello, 12);
    data.copy(hello, 12 + name.length + pad4(name.length));
    socket.write(hello);
    const reply = await readSetupReply(socket);
    return new X11Connection(socket, parseSetup(reply));
  }

  /** request sends one encoded request and resolves with its reply (whole packet). */
  request(packet: Buffer): Promise<Buffer> {
    return this.send(packet, true) as Promise<Buffer>;
  }

  /**
   * requestVoid sends a request that has no reply. It resolves once a later reply shows the
   * server processed it without error, so callers that need that certainty follow with sync().
   */
  requestVoid(packet: Buffer): Promise<void> {
    return this.send(packet, false).then(() => undefined);
  }

  /** sync makes a round trip (GetInputFocus), so every earlier request has been processed. */
  async sync(): Promise<void> {
    const packet = Buffer.alloc(4);
    packet.writeUInt8(43, 0);
    packet.writeUInt16LE(1, 2);
    await this.request(packet);
  }

  get isClosed(): boolean {
    return this.closedError !== null;
  }

  close(): void {
    this.socket.destroy();
    this.fail(new Error('X11 connection closed'));
  }

  private send(packet: Buffer, hasReply: boolean): Promise<Buffer | undefined> {
    if (this.closedError) return Promise.reject(this.closedError);
    this.seq += 1;
    const seq = this.seq;
    const promise = new Promise<Buffer | undefined>((resolve, reject) =>
      this.pending.push({ seq, hasReply, resolve, reject }),
    );
    this.socket.write(packet);
    return promise;
  }

  private fail(err: Error): void {
    if (this.closedError) return;
    this.closedError = err;
    for (const p of this.pending.splice(0)) p.reject(err);
  }

  private onData(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    for (;;) {
      if (this.buffered < 32) return;
      const head = this.peek(32);
      const kind = head.readUInt8(0);
      const size = kind === 1 ? 32 + head.readUInt32LE(4) * 4 : 32;
      if (this.buffered < size) return;
      const packet = this.take(size);
      if (kind === 0 || kind === 1) this.dispatch(packet);
      // Anything else is an event; the driver selects none, but MappingNotify reaches everyone.
    }
  }

  private dispatch(packet: Buffer): void {
    const seq16 = packet.readUInt16LE(2);
    // Requests are answered in order: void requests before this one completed without error.
    while (this.pending.length > 0) {
      const p = this.pending[0]!;
      if ((p.seq & 0xffff) === seq16) {
        this.pending.shift();
        if (packet.readUInt8(0) === 0)
          p.reject(new X11Error(packet.readUInt8(1), packet.readUInt32LE(4), packet.readUInt8(10)));
        else p.resolve(packet);
        return;
      }
      this.pending.shift();
      if (p.hasReply) p.reject(new Error('X11 reply missing (protocol desync)'));
      else p.resolve(undefined);
    }
  }

  private peek(n: number): Buffer {
    if (this.chunks[0]!.length >= n) return this.chunks[0]!;
    const joined = Buffer.concat(this.chunks);
    this.chunks = [joined];
    return joined;
  }

  private take(n: number): Buffer {
    const first = this.chunks[0]!;
    let out: Buffer;
    if (first.length >= n) {
      out = first.subarray(0, n);
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
    } else {
      const joined = Buffer.concat(this.chunks);
      out = joined.subarray(0, n);
      this.chunks = joined.length > n ? [joined.subarray(n)] : [];
    }
    this.buffered -= n;
    return out;
  }
}

function readSetupReply(socket: Socket): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let acc = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      acc = Buffer.concat([acc, chunk]);
      if (acc.length < 8) return;
      const total = 8 + acc.readUInt16LE(6) * 4;
      if (acc.length < total) return;
      socket.off('data', onData);
      socket.off('error', reject);
      if (acc.length > total) socket.unshift(acc.subarray(total));
      const status = acc.readUInt8(0);
      if (status !== 1) {
        const reason = acc.subarray(8, 8 + acc.readUInt8(1)).toString('latin1');
        socket.destroy();
        reject(new Error(`X11 connection refused: ${reason || 'authentication required'}`));
        return;
      }
      resolve(acc.subarray(0, total));
    };
    socket.on('data', onData);
    socket.once('error', reject);
  });
}

function parseSetup(r: Buffer): X11Setup {
  const vendorLen = r.readUInt16LE(24);
  const screens = r.readUInt8(28);
  const formatCount = r.readUInt8(29);
  if (screens < 1) throw new Error('X11 server reports no screens');
  let off = 40 + vendorLen + pad4(vendorLen);
  const bppByDepth = new Map<number, number>();
  for (let i = 0; i < formatCount; i += 1, off += 8)
    bppByDepth.set(r.readUInt8(off), r.readUInt8(off + 1));
  const screen = off;
  const root = r.readUInt32LE(screen);
  const rootVisual = r.readUInt32LE(screen + 32);
  const rootDepth = r.readUInt8(screen + 38);
  let masks = { red: 0xff0000, green: 0xff00, blue: 0xff };
  let d = screen + 40;
  for (let i = 0; i < r.readUInt8(screen + 39); i += 1) {
    const visuals = r.readUInt16LE(d + 2);
    d += 8;
    for (let v = 0; v < visuals; v += 1, d += 24)
      if (r.readUInt32LE(d) === rootVisual)
        masks = {
          red: r.readUInt32LE(d + 8),
          green: r.readUInt32LE(d + 12),
          blue: r.readUInt32LE(d + 16),
        };
  }
  return {
    root,
    width: r.readUInt16LE(screen + 20),
    height: r.readUInt16LE(screen + 22),
    rootDepth,
    rootVisual,
    bitsPerPixel: bppByDepth.get(rootDepth) ?? 32,
    redMask: masks.red,
    greenMask: masks.green,
    blueMask: masks.blue,
    minKeycode: r.readUInt8(34),
    maxKeycode: r.readUInt8(35),
    isLittleEndianImage: r.readUInt8(30) === 0,
  };
}
