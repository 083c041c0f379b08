import { connect, type Socket } from 'node:net';
import { parseVncEndpoint } from '@cubicle/control-plane';
import { connectSandboxSocket } from '@cubicle/unix-peer';
import { ViewerCloseCodes, type ViewerCloseReason, type ViewerMode } from '@cubicle/contract/api';
import { WebSocket, type RawData } from 'ws';
import { RfbProtocolViolation, RfbViewFilter } from '../rfb/rfb-view-filter.js';

/** Pause reading the desktop while this much is queued for a slow viewer. */
export const DEFAULT_HIGH_WATER_BYTES = 4 * 1024 * 1024;
const CONNECT_TIMEOUT_MS = 5_000;
/** Viewer bytes held while a sandbox socket is checked (an RFB client waits for the banner). */
const MAX_EARLY_BYTES = 64 * 1024;
/** A close frame queued behind a slow viewer's backlog may not delay the end of the stream. */
const CLOSE_GRACE_MS = 500;

const CLOSE_TEXT: Record<ViewerCloseReason, string> = {
  expired: 'viewer ticket expired',
  revoked: 'viewer ticket revoked',
  ended: 'the claim has ended',
  handoff_ended: 'the handoff has ended: control is back with the agent',
  limit: 'too many viewers',
  protocol_violation: 'input not allowed for a view-only viewer',
  upstream: 'the desktop is not reachable',
  shutting_down: 'server shutting down, reconnect',
};

export interface BridgeOptions {
  ws: WebSocket;
  /** The sandbox's VNC server, `host:port` or `unix:/path`. */
  upstream: string;
  mode: ViewerMode;
  /** When the ticket expires; the stream closes then (code 4001). */
  expiresAt?: Date;
  /**
   * A control ticket bound to a handoff: the client speaks the checked protocol (RfbViewFilter)
   * with its input forwarded, and `onInput` hears of each chunk that carried input (the handoff's
   * lease is renewed from it). Without it, `control` forwards bytes unparsed.
   */
  handoff?: { onInput: () => void };
  highWaterBytes?: number;
  /**
   * Written to the desktop before any viewer byte: the sandbox's VNC credential
   * (vncPreambleForSandbox). A guest sends nothing, not even its banner, to a viewer without it.
   */
  preamble?: Buffer;
  onClosed?: (info: BridgeCloseInfo) => void;
}

export interface BridgeCloseInfo {
  reason: ViewerCloseReason | 'client_closed';
  /** Client messages the view filter dropped (keys, pointer, clipboard). */
  droppedMessages: number;
  bytesToViewer: number;
  bytesToDesktop: number;
}

export interface RfbBridge {
  close(reason: ViewerCloseReason): void;
  /** Stop forwarding input (a handoff's stream whose handoff ended); the picture goes on. */
  stopInput(): void;
  readonly closed: Promise<BridgeCloseInfo>;
}

/**
 * parseEndpoint reads `host:port`, `[v6]:port` or `unix:/path` (a local sandbox's socket); null
 * when it is none. The one parser lives beside the backends (`parseVncEndpoint`).
 */
export const parseEndpoint = parseVncEndpoint;

const toBuffer = (data: RawData): Buffer =>
  Buffer.isBuffer(data)
    ? data
    : Array.isArray(data)
      ? Buffer.concat(data)
      : Buffer.from(data as ArrayBuffer);

/**
 * bridgeRfb joins an accepted WebSocket to the sandbox's VNC server over TCP. In `view` mode
 * every client byte passes RfbViewFilter first (input dropped, violations close the stream);
 * `control` forwards everything. Backpressure both ways keeps memory bounded: desktop reads
 * pause while the viewer's queue is above the high-water mark, and viewer reads pause while the
 * desktop socket cannot take more. Call it synchronously after the upgrade, before any await,
 * so no client message is missed.
 */
export function bridgeRfb(options: BridgeOptions): RfbBridge {
  const { ws, mode } = options;
  const highWater = options.highWaterBytes ?? DEFAULT_HIGH_WATER_BYTES;
  const filter =
    mode === 'view'
      ? new RfbViewFilter()
      : options.handoff
        ? new RfbViewFilter({ forwardInput: true })
        : null;
  const stats = { droppedMessages: 0, bytesToViewer: 0, bytesToDesktop: 0 };
  let resolveClosed!: (info: BridgeCloseInfo) => void;
  const closed = new Promise<BridgeCloseInfo>((resolve) => (resolveClosed = resolve));
  let isEnded = false;
  let expiryTimer: NodeJS.Timeout | undefined;

  const endpoint = parseEndpoint(options.upstream);
  // The desktop's socket; null while a local sandbox's is being checked (connectSandboxSocket).
  let tcp: Socket | null = null;
  const early: Buffer[] = [];
  let earlyBytes = 0;

  const end = (reason: BridgeCloseInfo['reason']) => {
    if (isEnded) return;
    isEnded = true;
    clearTimeout(expiryTimer);
    tcp?.destroy();
    if (reason !== 'client_closed' && ws.readyState === WebSocket.OPEN) {
      ws.close(ViewerCloseCodes[reason], CLOSE_TEXT[reason]);
      const cut = setTimeout(() => ws.terminate(), CLOSE_GRACE_MS);
      cut.unref();
      ws.once('close', () => clearTimeout(cut));
    } else if (ws.readyState === WebSocket.CONNECTING) {
      ws.terminate();
    }
    const info = { reason, ...stats };
    options.onClosed?.(info);
    resolveClosed(info);
  };

  const afterSend = (err?: Error) => {
    if (err) return;
    if (tcp?.isPaused() && ws.bufferedAmount <= highWater / 2 && !isEnded) tcp.resume();
  };
  const attach = (socket: Socket) => {
    if (isEnded) return socket.destroy();
    tcp = socket;
    socket.setNoDelay(true);
    socket.on('error', () => end('upstream'));
    socket.on('close', () => end('upstream'));
    socket.on('data', (data: Buffer) => {
      if (isEnded || ws.readyState !== WebSocket.OPEN) return;
      stats.bytesToViewer += data.length;
      ws.send(data, { binary: true }, afterSend);
      if (ws.bufferedAmount > highWater) socket.pause();
    });
    socket.on('drain', () => ws.resume());
    if (options.preamble) socket.write(options.preamble);
    for (const bytes of early.splice(0)) socket.write(bytes);
    socket.resume();
  };

  if (!endpoint) {
    queueMicrotask(() => end('upstream'));
  } else if ('path' in endpoint) {
    // A local sandbox: its socket is used only once its peer is checked to be that sandbox.
    connectSandboxSocket(endpoint.path, { timeoutMs: CONNECT_TIMEOUT_MS }).then(attach, () =>
      end('upstream'),
    );
  } else {
    const socket = connect(endpoint);
    socket.setTimeout(CONNECT_TIMEOUT_MS, () => end('upstream'));
    socket.once('connect', () => socket.setTimeout(0));
    attach(socket);
  }

  ws.on('message', (data) => {
    if (isEnded) return;
    let bytes = toBuffer(data);
    if (filter) {
      try {
        const result = filter.push(bytes);
        stats.droppedMessages += result.dropped;
        bytes = result.forward;
        if (result.input > 0) options.handoff?.onInput();
      } catch (error) {
        if (error instanceof RfbProtocolViolation) return end('protocol_violation');
        throw error;
      }
    }
    if (bytes.length === 0) return;
    stats.bytesToDesktop += bytes.length;
    if (!tcp) {
      early.push(bytes);
      earlyBytes += bytes.length;
      if (earlyBytes > MAX_EARLY_BYTES) end('upstream');
      return;
    }
    if (!tcp.write(bytes)) ws.pause();
  });
  ws.on('close', () => end('client_closed'));
  ws.on('error', () => end('client_closed'));

  if (options.expiresAt) {
    // setTimeout caps at ~24.8 days; tickets live at most a day.
    const ms = Math.max(0, options.expiresAt.getTime() - Date.now());
    expiryTimer = setTimeout(() => end('expired'), ms);
  }
  return { close: (reason) => end(reason), stopInput: () => filter?.stopInput(), closed };
}
