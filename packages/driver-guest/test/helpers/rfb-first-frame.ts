import { connect, type NetConnectOpts } from 'node:net';

export interface FirstFrame {
  /** The version the server announced. */
  version: string;
  /** The framebuffer size from ServerInit. */
  width: number;
  height: number;
  /** The first rectangle of the first FramebufferUpdate. */
  rect: { x: number; y: number; w: number; h: number; encoding: number };
}

/**
 * rfbFirstFrame is a viewer's first moments as a real VNC client lives them: the RFB 3.8
 * handshake with security type None, a shared ClientInit, one full FramebufferUpdateRequest,
 * and the header of the update that answers it.
 */
export function rfbFirstFrame(
  endpoint: NetConnectOpts,
  timeoutMs = 15_000,
  /** The guest's viewer credential (viewerPreambleOfToken), sent before the handshake. */
  preamble?: Buffer,
): Promise<FirstFrame> {
  return new Promise((resolve, reject) => {
    const socket = connect(endpoint);
    if (preamble) socket.write(preamble);
    let buffered = Buffer.alloc(0);
    let wake: (() => void) | null = null;
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      wake?.();
    });
    socket.once('close', () => wake?.());
    socket.on('error', () => undefined);
    const timer = setTimeout(() => socket.destroy(new Error('no frame in time')), timeoutMs);
    const read = async (n: number): Promise<Buffer> => {
      while (buffered.length < n) {
        if (socket.destroyed) throw new Error(`the VNC server closed after ${buffered.length} B`);
        await new Promise<void>((r) => (wake = r));
      }
      const bytes = buffered.subarray(0, n);
      buffered = buffered.subarray(n);
      return bytes;
    };
    (async (): Promise<FirstFrame> => {
      const version = (await read(12)).toString('latin1');
      socket.write('RFB 003.008\n');
      const types = await read((await read(1))[0]!);
      if (!types.includes(1)) throw new Error(`no security type None: ${[...types]}`);
      socket.write(Buffer.from([1]));
      const result = (await read(4)).readUInt32BE(0);
      if (result !== 0) throw new Error(`security result ${result}`);
      socket.write(Buffer.from([1]));
      const init = await read(24);
      await read(init.readUInt32BE(20));
      const width = init.readUInt16BE(0);
      const height = init.readUInt16BE(2);
      const request = Buffer.alloc(10);
      request.writeUInt8(3, 0);
      request.writeUInt16BE(width, 6);
      request.writeUInt16BE(height, 8);
      socket.write(request);
      const update = await read(4);
      if (update[0] !== 0) throw new Error(`message type ${update[0]} before a FramebufferUpdate`);
      const header = await read(12);
      return {
        version,
        width,
        height,
        rect: {
          x: header.readUInt16BE(0),
          y: header.readUInt16BE(2),
          w: header.readUInt16BE(4),
          h: header.readUInt16BE(6),
          encoding: header.readInt32BE(8),
        },
      };
    })()
      .then(resolve, reject)
      .finally(() => {
        clearTimeout(timer);
        socket.destroy();
      });
  });
}
