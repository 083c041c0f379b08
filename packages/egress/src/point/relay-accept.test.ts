import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { HandBack } from './relay-accept.js';

/** dial connects to the hand-back port as the relay does and writes `bytes`. */
const dial = (port: number, bytes: string) =>
  new Promise<Socket>((resolve) => {
    const socket = connect({ host: '127.0.0.1', port }, () => {
      socket.write(bytes);
      resolve(socket);
    });
    socket.on('error', () => undefined);
  });

const readAll = (socket: Socket) =>
  new Promise<string>((resolve) => {
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.once('end', () => resolve(text));
    socket.resume();
  });

describe('HandBack (a connection the egress relay brings back to the point)', () => {
  const handBack = new HandBack();

  it('gives the socket named by its token, with the bytes after the token line', async () => {
    let relaySide: Socket | undefined;
    const socket = await handBack.expect((port, token) => {
      void dial(port, `${token}\nafter the hello`).then((s) => {
        relaySide = s;
        s.end();
      });
    });
    expect(socket).not.toBeNull();
    expect(await readAll(socket!)).toBe('after the hello');
    socket!.destroy();
    relaySide?.destroy();
  });

  it('closes a connection naming no expected token, and still serves the expected one', async () => {
    let stranger: Socket | undefined;
    const closedStranger = new Promise<boolean>((resolve) => {
      void handBack
        .expect((port, token) => {
          void dial(port, `${'0'.repeat(32)}\nnot mine`).then((s) => {
            stranger = s;
            s.once('close', () => resolve(true));
            void dial(port, `${token}\n`).then((mine) => mine.end());
          });
        })
        .then((socket) => socket?.destroy());
    });
    expect(await closedStranger).toBe(true);
    stranger?.destroy();
  });

  it('answers null for every waiting connection once closed', async () => {
    const waiting = handBack.expect(() => undefined);
    await new Promise((r) => setTimeout(r, 20));
    handBack.close();
    expect(await waiting).toBeNull();
  });
});
