import { connect } from 'node:net';

/** rfbBanner reads the first 12 bytes a VNC server sends (its protocol version). */
export function rfbBanner(port: number, host = '127.0.0.1'): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    let data = '';
    socket.setTimeout(3000, () => reject(new Error('no banner')));
    socket.on('data', (chunk) => {
      data += chunk.toString('latin1');
      if (data.length >= 12) {
        socket.destroy();
        resolve(data.slice(0, 12));
      }
    });
    socket.on('error', reject);
  });
}
