import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';

/** X11 keysyms the tests press. */
export const KEYSYM = { space: 0x20, Return: 0xff0d, Tab: 0xff09 } as const;

export interface FramebufferUpdate {
  rects: { x: number; y: number; w: number; h: number; encoding: number }[];
  /** Raw pixel bytes of all rectangles. */
  bytes: number;
}

/**
 * RawRfbClient is a minimal RFB 3.8 client over the viewer WebSocket, written the way a hostile
 * viewer would: it asks for exclusive access (shared flag 0), sends pointer clicks, keys and
 * clipboard text whatever its ticket says, and asks for Raw frames so it can count what arrives.
 */
export class RawRfbClient {
  private buffer = Buffer.alloc(0);
  private wake: (() => void) | null = null;
  private isClosed = false;
  readonly closed: Promise<{ code: number; reason: string; at: number }>;
  width = 0;
  height = 0;
  bytesPerPixel = 4;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, data]);
      this.wake?.();
    });
    this.closed = new Promise((resolve) =>
      ws.once('close', (code, reason) => {
        this.isClosed = true;
        this.wake?.();
        resolve({ code, reason: reason.toString(), at: Date.now() });
      }),
    );
  }

  /** connect opens the stream like noVNC (subprotocol `binary`); it throws if refused. */
  static async connect(streamUrl: string): Promise<RawRfbClient> {
    const ws = new WebSocket(streamUrl, ['binary']);
    const client = new RawRfbClient(ws);
    await Promise.race([
      once(ws, 'open'),
      once(ws, 'unexpected-response').then(([, res]) => {
        throw new Error(`upgrade refused: ${(res as IncomingMessage).statusCode}`);
      }),
    ]);
    return client;
  }

  /** read waits for exactly n bytes (or throws when the stream closes first). */
  async read(n: number, timeoutMs = 15_000): Promise<Buffer> {
    const deadline = Date.now() + timeoutMs;
    while (this.buffer.length < n) {
      if (this.isClosed) throw new Error('the stream closed');
      if (Date.now() > deadline) throw new Error(`no ${n} bytes within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, 100);
      });
      this.wake = null;
    }
    const out = this.buffer.subarray(0, n);
    this.buffer = this.buffer.subarray(n);
    return out;
  }

  /** handshake: version 3.8, security None, ClientInit with shared = 0, then Raw encoding only. */
  async handshake(): Promise<void> {
    const version = (await this.read(12)).toString('latin1');
    if (!version.startsWith('RFB 003.')) throw new Error(`not RFB: ${version}`);
    this.ws.send(Buffer.from('RFB 003.008\n'));
    const count = (await this.read(1))[0]!;
    const types = [...(await this.read(count))];
    if (!types.includes(1)) throw new Error(`no security None in ${types.join(',')}`);
    this.ws.send(Buffer.from([1]));
    const result = (await this.read(4)).readUInt32BE(0);
    if (result !== 0) throw new Error(`security failed: ${result}`);
    this.ws.send(Buffer.from([0])); // shared = 0: "disconnect everyone else" (forced to 1 in view)
    const init = await this.read(24);
    this.width = init.readUInt16BE(0);
    this.height = init.readUInt16BE(2);
    this.bytesPerPixel = init[4]! / 8;
    await this.read(init.readUInt32BE(20)); // desktop name
    const encodings = Buffer.from([2, 0, 0, 1, 0, 0, 0, 0]); // SetEncodings [Raw]
    this.ws.send(encodings);
  }

  pointer(x: number, y: number, mask: number) {
    const b = Buffer.alloc(6);
    b[0] = 5;
    b[1] = mask;
    b.writeUInt16BE(x, 2);
    b.writeUInt16BE(y, 4);
    this.ws.send(b);
  }

  /** click moves, presses and releases the left button at (x, y). */
  click(x: number, y: number) {
    this.pointer(x, y, 0);
    this.pointer(x, y, 1);
    this.pointer(x, y, 0);
  }

  key(keysym: number) {
    for (const down of [1, 0]) {
      const b = Buffer.alloc(8);
      b[0] = 4;
      b[1] = down;
      b.writeUInt32BE(keysym, 4);
      this.ws.send(b);
    }
  }

  cutText(text: string) {
    const body = Buffer.from(text, 'latin1');
    const head = Buffer.alloc(8);
    head[0] = 6;
    head.writeUInt32BE(body.length, 4);
    this.ws.send(Buffer.concat([head, body]));
  }

  requestFrame(incremental: boolean) {
    const b = Buffer.alloc(10);
    b[0] = 3;
    b[1] = incremental ? 1 : 0;
    b.writeUInt16BE(this.width, 6);
    b.writeUInt16BE(this.height, 8);
    this.ws.send(b);
  }

  /** nextFramebufferUpdate reads server messages until a FramebufferUpdate has fully arrived. */
  async nextFramebufferUpdate(): Promise<FramebufferUpdate> {
    for (;;) {
      const type = (await this.read(1))[0]!;
      if (type === 0) {
        const n = (await this.read(3)).readUInt16BE(1);
        const update: FramebufferUpdate = { rects: [], bytes: 0 };
        for (let i = 0; i < n; i++) {
          const h = await this.read(12);
          const rect = {
            x: h.readUInt16BE(0),
            y: h.readUInt16BE(2),
            w: h.readUInt16BE(4),
            h: h.readUInt16BE(6),
            encoding: h.readInt32BE(8),
          };
          if (rect.encoding !== 0) throw new Error(`unexpected encoding ${rect.encoding}`);
          const size = rect.w * rect.h * this.bytesPerPixel;
          await this.read(size, 30_000);
          update.rects.push(rect);
          update.bytes += size;
        }
        return update;
      } else if (type === 1) {
        const head = await this.read(5);
        await this.read(6 * head.readUInt16BE(3));
      } else if (type === 2) {
        continue; // Bell
      } else if (type === 3) {
        const head = await this.read(7);
        await this.read(head.readUInt32BE(3));
      } else {
        throw new Error(`unexpected server message ${type}`);
      }
    }
  }

  close() {
    this.ws.close();
  }
}

export { refusedUpgrade } from '../../harness/refused-upgrade.js';
