import { rm } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * serveVncSocket serves a TCP VNC server on a unix socket by forwarding each connection. A
 * sandboxed desktop's x11vnc listens on 127.0.0.1 inside the sandbox's own network namespace,
 * which nothing outside can reach; the control plane connects to this socket instead (x11vnc's
 * own `-unixsock` sends its banner, then drops the client with Debian's libvncserver).
 */
export async function serveVncSocket(
  socketPath: string,
  port: () => number | null,
): Promise<Server> {
  await rm(socketPath, { force: true });
  const open = new Set<Socket>();
  const server = createServer((client) => {
    const target = port();
    if (target === null) return client.destroy(); // x11vnc is restarting: the client retries
    const upstream = connect({ host: '127.0.0.1', port: target, noDelay: true });
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.once('close', () => open.delete(socket));
      socket.on('error', () => socket.destroy());
    }
    client.pipe(upstream).pipe(client);
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  });
  server.once('close', () => {
    for (const socket of open) socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  return server;
}
