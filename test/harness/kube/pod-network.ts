// The test node's pod network: a sandboxed desktop has a private network namespace and serves
// its guest driver and VNC on unix sockets; the agent gives each Pod/VMI the TCP ports a real pod
// network would (its own loopback IP, guest 8080, VNC 5900) by forwarding them to those sockets,
// as a CNI plugin's port mapping would. Only the forwarded ports exist: the desktop itself still
// reaches nothing outside its sandbox.
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface PortForward {
  port: number;
  socketPath: string;
}

export interface PodNetwork {
  close(): Promise<void>;
}

/** forwardPodPorts listens on `ip`:port for each forward and pipes every connection to its socket. */
export async function forwardPodPorts(ip: string, forwards: PortForward[]): Promise<PodNetwork> {
  const servers: Server[] = [];
  const open = new Set<Socket>();
  const track = (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  try {
    for (const forward of forwards) {
      const server = createServer((client) => {
        track(client);
        const upstream = connect(forward.socketPath);
        track(upstream);
        client.pipe(upstream).pipe(client);
        client.once('close', () => upstream.destroy());
        upstream.once('close', () => client.destroy());
      });
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(forward.port, ip, () => resolve());
      });
    }
  } catch (error) {
    for (const server of servers) server.close();
    throw error;
  }
  return {
    close: async () => {
      for (const socket of open) socket.destroy();
      await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    },
  };
}
