import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { Socket } from 'node:net';
import {
  VNC_PREAMBLE_BYTES,
  VNC_PREAMBLE_CONTEXT,
  VNC_PREAMBLE_PREFIX,
} from '@cubicle/contract/guest';

/**
 * viewerPreambleOf is the line a viewer must send first on this desktop's VNC port, derived from
 * the SHA-256 of the guest token (what a sandboxed daemon keeps instead of the token). See
 * @cubicle/contract/guest `VNC_PREAMBLE_PREFIX` for the format.
 */
export function viewerPreambleOf(tokenSha256: Buffer): Buffer {
  const mac = createHmac('sha256', tokenSha256).update(VNC_PREAMBLE_CONTEXT).digest('hex');
  return Buffer.from(`${VNC_PREAMBLE_PREFIX}${mac}\n`, 'latin1');
}

/** viewerPreambleOfToken: the same from the token itself. */
export const viewerPreambleOfToken = (token: string) =>
  viewerPreambleOf(createHash('sha256').update(token).digest());

/**
 * acceptViewerPreamble reads the first VNC_PREAMBLE_BYTES a client sends and compares them with
 * `expected` in constant time. True: the bytes that followed are put back (unshift) for the RFB
 * handshake and the socket is left paused. False: the client closed, or sent anything else; the
 * caller closes it without having written a byte.
 */
export function acceptViewerPreamble(socket: Socket, expected: Buffer): Promise<boolean> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const done = (isAccepted: boolean) => {
      socket.off('data', onData);
      socket.off('close', onClose);
      socket.pause();
      resolve(isAccepted);
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      length += chunk.length;
      if (length < VNC_PREAMBLE_BYTES) return;
      const received = Buffer.concat(chunks);
      const line = received.subarray(0, VNC_PREAMBLE_BYTES);
      const isAccepted = expected.length === line.length && timingSafeEqual(line, expected);
      // Paused and without our listener first, so what is put back waits for the next reader.
      done(isAccepted);
      if (isAccepted && received.length > VNC_PREAMBLE_BYTES)
        socket.unshift(received.subarray(VNC_PREAMBLE_BYTES));
    };
    const onClose = () => done(false);
    socket.on('data', onData);
    socket.once('close', onClose);
  });
}
