import { connect as tlsConnect } from 'node:tls';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { peekDestination } from './peek-destination.js';

/** The ClientHello Node's TLS client sends for `servername`, caught by a plain TCP server. */
async function clientHello(servername: string): Promise<Buffer> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const hello = new Promise<Buffer>((resolve) =>
    server.once('connection', (socket) =>
      socket.once('data', (chunk: Buffer) => {
        resolve(chunk);
        socket.destroy();
      }),
    ),
  );
  const client = tlsConnect({ host: '127.0.0.1', port, servername });
  client.on('error', () => undefined);
  const data = await hello;
  client.destroy();
  server.close();
  return data;
}

describe('peekDestination', () => {
  it('reads the SNI of a real ClientHello, and waits while it is incomplete', async () => {
    const hello = await clientHello('api.example.test');
    expect(peekDestination(hello)).toEqual({ kind: 'tls', name: 'api.example.test' });
    expect(peekDestination(hello.subarray(0, 100))).toEqual({ kind: 'more' });
  });

  it('reads the Host of an HTTP request without its port', () => {
    const request = Buffer.from('GET / HTTP/1.1\r\nHost: WWW.Example.test:8080\r\n\r\n');
    expect(peekDestination(request)).toEqual({ kind: 'http', name: 'www.example.test' });
    expect(peekDestination(request.subarray(0, 20))).toEqual({ kind: 'more' });
    expect(peekDestination(Buffer.from('GET / HTTP/1.1\r\nHost: 198.51.100.7\r\n\r\n'))).toEqual({
      kind: 'http',
      name: null,
    });
  });

  it('says other for bytes that are neither', () => {
    expect(peekDestination(Buffer.from('SSH-2.0-OpenSSH_9.2\r\n'))).toEqual({ kind: 'other' });
    expect(peekDestination(Buffer.from([0x16, 0x01, 0x00]))).toEqual({ kind: 'more' });
    expect(peekDestination(Buffer.from([0x16, 0x07, 0x00, 0x00, 0x10]))).toEqual({ kind: 'other' });
  });
});
