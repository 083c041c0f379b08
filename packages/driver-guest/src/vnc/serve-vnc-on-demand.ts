import { rm } from 'node:fs/promises';
import {
  connect,
  createServer,
  type AddressInfo,
  type ListenOptions,
  type Server,
  type Socket,
} from 'node:net';
import { superviseVnc, type VncOptions, type VncSupervisor } from './supervise-vnc.js';
import { acceptViewerPreamble } from './viewer-preamble.js';

export interface VncOnDemandOptions extends Omit<VncOptions, 'host' | 'port'> {
  /** The local address viewers connect to, such as 0.0.0.0 in a Pod or a simulated pod's IP. */
  host: string;
  /** The port viewers connect to on `host`; a free one by default. */
  port?: number;
  /**
   * Serve viewers on this unix socket too: a sandboxed desktop's network namespace is
   * unreachable from outside, so the control plane connects here (x11vnc's own `-unixsock`
   * sends its banner, then drops the client with Debian's libvncserver). A path, or the
   * descriptor of a socket the launcher bound (a sandbox listens on what it is handed).
   */
  socketPath?: string | { fd: number };
  /**
   * The line every viewer must send first, on every listener (viewerPreambleOf the guest
   * token): without it a connection gets not one byte, not even the RFB banner, and x11vnc never
   * starts for it. x11vnc itself runs without a password on 127.0.0.1 only, behind this check.
   */
  viewerPreamble?: Buffer;
}

export interface VncOnDemand {
  /** The TCP port viewers connect to on `host`. */
  readonly port: number;
  /**
   * `port` while a viewer can be served: before the first viewer (x11vnc starts for it) and
   * while x11vnc is up; null while the supervisor restarts a dead x11vnc.
   */
  availablePort(): number | null;
  /** x11vnc's pid; null until the first viewer. */
  pid(): number | null;
  /** stop closes the listeners and open streams, then stops x11vnc if it was started. */
  stop(): Promise<void>;
}

/** The version this server announces; x11vnc (libvncserver) announces the same. */
const RFB_VERSION = Buffer.from('RFB 003.008\n', 'latin1');
const VERSION_BYTES = RFB_VERSION.length;
/** A connection that never answers the banner (a port probe left open) is dropped after this. */
const HANDSHAKE_TIMEOUT_MS = 30_000;

/**
 * readAtLeast resolves with the first `n` or more bytes `socket` sends, leaving it paused with
 * no data listener (ready to pipe), or null if it closes first.
 */
function readAtLeast(socket: Socket, n: number): Promise<Buffer | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const done = (value: Buffer | null) => {
      socket.off('data', onData);
      socket.off('close', onClose);
      socket.pause();
      resolve(value);
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      length += chunk.length;
      if (length >= n) done(Buffer.concat(chunks));
    };
    const onClose = () => done(null);
    socket.on('data', onData);
    socket.once('close', onClose);
    // A socket an earlier reader paused does not flow again for a new listener by itself.
    socket.resume();
  });
}

/**
 * serveVncOnDemand listens for VNC viewers and starts x11vnc (supervised, on a free port on
 * 127.0.0.1) only when the first one arrives: an idle desktop nobody watches does not pay its
 * ~19 MB RSS. x11vnc then stays up for later viewers until stop().
 *
 * Each connection gets the RFB version banner from here at once; x11vnc starts only when the
 * client answers it, so port probes (a health check that connects and closes) never start it.
 * Then the client's answer goes to x11vnc in place of an answer to x11vnc's own identical
 * banner, and bytes are forwarded both ways. Concurrent first viewers wait on the same start;
 * a failed start is retried by the next viewer.
 */
export async function serveVncOnDemand(options: VncOnDemandOptions): Promise<VncOnDemand> {
  const { host, port: viewerPort, socketPath, viewerPreamble, ...vncOptions } = options;
  let starting: Promise<VncSupervisor> | null = null;
  let supervisor: VncSupervisor | null = null;
  let isStopping = false;
  const open = new Set<Socket>();

  const ensureVnc = () => {
    if (isStopping) return Promise.reject(new Error('stopping'));
    starting ??= superviseVnc(vncOptions).then(
      (started) => (supervisor = started),
      (err: unknown) => {
        starting = null;
        throw err;
      },
    );
    return starting;
  };

  const forward = async (client: Socket) => {
    open.add(client);
    client.once('close', () => open.delete(client));
    client.on('error', () => client.destroy());
    client.setTimeout(HANDSHAKE_TIMEOUT_MS, () => client.destroy());
    if (viewerPreamble && !(await acceptViewerPreamble(client, viewerPreamble)))
      return client.destroy();
    client.write(RFB_VERSION);
    const answer = await readAtLeast(client, VERSION_BYTES);
    if (!answer) return;
    const port = await ensureVnc().then(
      (vnc) => vnc.port(),
      () => null,
    );
    // x11vnc is restarting (or could not start): the viewer reconnects.
    if (port === null || client.destroyed) return client.destroy();
    const upstream = connect({ host: '127.0.0.1', port, noDelay: true });
    open.add(upstream);
    upstream.once('close', () => open.delete(upstream));
    upstream.on('error', () => upstream.destroy());
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
    const banner = await readAtLeast(upstream, VERSION_BYTES);
    if (!banner?.subarray(0, 4).equals(RFB_VERSION.subarray(0, 4))) return upstream.destroy();
    client.setTimeout(0);
    upstream.write(answer);
    if (banner.length > VERSION_BYTES) client.write(banner.subarray(VERSION_BYTES));
    client.pipe(upstream).pipe(client);
  };

  const servers: Server[] = [];
  const listen = (server: Server, address: ListenOptions | { fd: number }) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(address, () => {
        server.off('error', reject);
        resolve();
      });
    });
  const stop = async () => {
    isStopping = true;
    for (const server of servers) server.close();
    for (const socket of open) socket.destroy();
    await (await starting?.catch(() => null))?.stop();
  };
  try {
    const tcp = createServer({ noDelay: true }, (client) => void forward(client));
    servers.push(tcp);
    await listen(tcp, { host, port: viewerPort ?? 0 });
    if (socketPath) {
      const unix = createServer((client) => void forward(client));
      servers.push(unix);
      if (typeof socketPath === 'string') {
        await rm(socketPath, { force: true });
        await listen(unix, { path: socketPath });
      } else {
        await listen(unix, { fd: socketPath.fd });
      }
    }
    const port = (tcp.address() as AddressInfo).port;
    return {
      port,
      availablePort: () => (supervisor === null || supervisor.port() !== null ? port : null),
      pid: () => supervisor?.pid() ?? null,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
