// A minimal RFB 3.8 client for benchmarks: security None, raw encoding only, and just enough
// message parsing to time FramebufferUpdateRequest → FramebufferUpdate. It speaks over any
// transport with send(buffer) and a data callback: a TCP socket to x11vnc, or the API's viewer
// WebSocket (ws package, subprotocol `binary`).
import { once } from 'node:events';
import { connect } from 'node:net';

/** ByteQueue turns a stream of chunks into exact-length reads. */
class ByteQueue {
  chunks = [];
  length = 0;
  waiter = null;
  failure = null;

  push(chunk) {
    this.chunks.push(chunk);
    this.length += chunk.length;
    this.wake();
  }

  fail(error) {
    this.failure = error;
    this.wake();
  }

  wake() {
    const w = this.waiter;
    if (w && (this.length >= w.n || this.failure)) {
      this.waiter = null;
      w.resolve();
    }
  }

  async read(n) {
    if (this.length < n) {
      if (this.failure) throw this.failure;
      await new Promise((resolve) => (this.waiter = { n, resolve }));
      if (this.length < n) throw this.failure;
    }
    const all = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    const out = all.subarray(0, n);
    const rest = all.subarray(n);
    this.chunks = rest.length ? [rest] : [];
    this.length = rest.length;
    return out;
  }
}

/**
 * tcpTransport connects straight to a sandbox's VNC port: `host:port` or `unix:/path`. The guest's
 * relay answers only after the viewer preamble (contract/guest vnc-preamble.ts), sent first.
 */
export async function tcpTransport(endpoint, preamble) {
  // `unix:/path` (a local sandbox's VNC socket) or `host:port`.
  const [host, port] = endpoint.split(':');
  const socket = endpoint.startsWith('unix:')
    ? connect(endpoint.slice('unix:'.length))
    : connect({ host, port: Number(port), noDelay: true });
  await once(socket, 'connect');
  if (preamble) socket.write(preamble);
  return {
    send: (buf) => socket.write(buf),
    onData: (cb) => socket.on('data', cb),
    onEnd: (cb) => socket.on('close', () => cb(new Error('connection closed'))),
    close: () => socket.destroy(),
  };
}

/** wsTransport opens the API's viewer stream (`WebSocket` from the ws package). */
export async function wsTransport(WebSocket, url) {
  const ws = new WebSocket(url, ['binary'], { perMessageDeflate: false });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) =>
      reject(new Error(`stream refused: HTTP ${res.statusCode}`)),
    );
  });
  ws.binaryType = 'nodebuffer';
  return {
    send: (buf) => ws.send(buf),
    onData: (cb) => ws.on('message', (data) => cb(data)),
    onEnd: (cb) => ws.on('close', (code) => cb(new Error(`stream closed (${code})`))),
    close: () => ws.close(),
  };
}

/** RfbClient does the handshake and answers the size of the next FramebufferUpdate. */
export class RfbClient {
  constructor(transport) {
    this.t = transport;
    this.q = new ByteQueue();
    transport.onData((chunk) => this.q.push(chunk));
    transport.onEnd((error) => this.q.fail(error));
  }

  async handshake() {
    const version = (await this.q.read(12)).toString('latin1');
    if (!version.startsWith('RFB 003.')) throw new Error(`not RFB: ${JSON.stringify(version)}`);
    this.t.send(Buffer.from('RFB 003.008\n', 'latin1'));
    const count = (await this.q.read(1))[0];
    if (count === 0) throw new Error('server refused the connection');
    const types = [...(await this.q.read(count))];
    if (!types.includes(1)) throw new Error(`no security type None in ${types}`);
    this.t.send(Buffer.from([1]));
    if ((await this.q.read(4)).readUInt32BE(0) !== 0) throw new Error('security failed');
    this.t.send(Buffer.from([1])); // ClientInit: shared
    const init = await this.q.read(24);
    this.width = init.readUInt16BE(0);
    this.height = init.readUInt16BE(2);
    this.bytesPerPixel = init[4] / 8;
    await this.q.read(init.readUInt32BE(20)); // desktop name
    // SetEncodings: raw only, so every rectangle's size is known from its header.
    const enc = Buffer.alloc(8);
    enc.writeUInt8(2, 0);
    enc.writeUInt16BE(1, 2);
    enc.writeInt32BE(0, 4);
    this.t.send(enc);
  }

  /** update asks for a region (non-incremental) and resolves with the bytes of the update. */
  async update(x, y, w, h) {
    const req = Buffer.alloc(10);
    req.writeUInt8(3, 0);
    req.writeUInt8(0, 1);
    req.writeUInt16BE(x, 2);
    req.writeUInt16BE(y, 4);
    req.writeUInt16BE(w, 6);
    req.writeUInt16BE(h, 8);
    this.t.send(req);
    for (;;) {
      const type = (await this.q.read(1))[0];
      if (type === 0) return this.readUpdate();
      if (type === 1) {
        const head = await this.q.read(5);
        await this.q.read(head.readUInt16BE(3) * 6);
      } else if (type === 2) {
        // Bell.
      } else if (type === 3) {
        const head = await this.q.read(7);
        await this.q.read(head.readUInt32BE(3));
      } else {
        throw new Error(`unexpected server message ${type}`);
      }
    }
  }

  async readUpdate() {
    const rects = (await this.q.read(3)).readUInt16BE(1);
    let bytes = 4;
    for (let i = 0; i < rects; i += 1) {
      const head = await this.q.read(12);
      const encoding = head.readInt32BE(8);
      if (encoding !== 0) throw new Error(`unexpected encoding ${encoding}`);
      const size = head.readUInt16BE(4) * head.readUInt16BE(6) * this.bytesPerPixel;
      await this.q.read(size);
      bytes += 12 + size;
    }
    return bytes;
  }

  close() {
    this.t.close();
  }
}
