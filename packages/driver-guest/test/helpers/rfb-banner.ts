import { connect } from 'node:net';

/**
 * rfbBanner reads the first 12 bytes a VNC server sends (its protocol version), after sending
 * `preamble` (the guest's viewer credential) when given. It rejects with `no banner` when the
 * server stays silent for `timeoutMs` and `closed after N B` when it hangs up first.
 */
export function rfbBanner(
  port: number,
  host = '127.0.0.1',
  preamble?: Buffer,
  timeoutMs = 3000,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    if (preamble) socket.write(preamble);
    let data = '';
    socket.setTimeout(timeoutMs, () => {
      socket.destroy();
      reject(new Error('no banner'));
    });
    socket.on('data', (chunk) => {
      data += chunk.toString('latin1');
      if (data.length >= 12) {
        socket.destroy();
        resolve(data.slice(0, 12));
      }
    });
    socket.on('close', () => reject(new Error(`closed after ${data.length} B`)));
    socket.on('error', reject);
  });
}
