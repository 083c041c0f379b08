import { createServer, connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  acceptViewerPreamble,
  viewerPreambleOf,
  viewerPreambleOfToken,
} from './viewer-preamble.js';
import { createHash } from 'node:crypto';

// The same vector is checked on the sending side (packages/viewer/src/stream/vnc-preamble.test.ts).
const TOKEN = 't'.repeat(64);
const VECTOR = 'CUBICLE-VNC/1 83b564998029e8f45ccc8197ddbee45bd0e9242d3aac23c81617d1d16be0b7f6\n';

/** accepted runs acceptViewerPreamble on a real loopback connection fed `chunks`. */
async function accepted(chunks: Buffer[]): Promise<{ isAccepted: boolean; rest: string }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const serverSide = new Promise<Socket>((resolve) => server.once('connection', resolve));
  const client = connect({ host: '127.0.0.1', port });
  const socket = await serverSide;
  const result = acceptViewerPreamble(socket, viewerPreambleOfToken(TOKEN));
  for (const chunk of chunks) {
    client.write(chunk);
    await new Promise((r) => setTimeout(r, 5));
  }
  const isAccepted = await Promise.race([
    result,
    new Promise<boolean>((r) => setTimeout(() => r(false), 500)),
  ]);
  let rest = '';
  if (isAccepted) {
    socket.on('data', (d: Buffer) => (rest += d.toString('latin1')));
    socket.resume();
    await new Promise((r) => setTimeout(r, 20));
  }
  client.destroy();
  socket.destroy();
  server.close();
  return { isAccepted, rest };
}

describe('viewer preamble', () => {
  it('is the HMAC of the token digest, the same from the token or its SHA-256', () => {
    expect(viewerPreambleOfToken(TOKEN).toString('latin1')).toBe(VECTOR);
    const digest = createHash('sha256').update(TOKEN).digest();
    expect(viewerPreambleOf(digest).toString('latin1')).toBe(VECTOR);
    expect(viewerPreambleOfToken('u'.repeat(64)).toString('latin1')).not.toBe(VECTOR);
  });

  it('accepts the right line, even split, and puts back what followed it', async () => {
    const line = Buffer.from(VECTOR, 'latin1');
    expect(await accepted([Buffer.concat([line, Buffer.from('RFB 003.008\n')])])).toEqual({
      isAccepted: true,
      rest: 'RFB 003.008\n',
    });
    expect(
      await accepted([line.subarray(0, 10), line.subarray(10, 50), line.subarray(50)]),
    ).toEqual({ isAccepted: true, rest: '' });
  });

  it('refuses a VNC client speaking first, a wrong MAC, another token and a short line', async () => {
    const wrongMac = VECTOR.replace('83b5', '83b6');
    for (const bad of [
      'RFB 003.008\n'.repeat(8),
      wrongMac,
      viewerPreambleOfToken('u'.repeat(64)).toString('latin1'),
      VECTOR.toUpperCase(),
    ])
      expect((await accepted([Buffer.from(bad, 'latin1')])).isAccepted, bad).toBe(false);
    // Too short: nothing is accepted before the whole line.
    expect((await accepted([Buffer.from(VECTOR.slice(0, 40), 'latin1')])).isAccepted).toBe(false);
  });
});
