import http from 'node:http';
import https from 'node:https';
import WebSocket from 'ws';
import {
  guestSocketPath,
  openSandboxConnection,
  SandboxSocketAgent,
} from '../backend/endpoints.js';

// Keep-alive: a call reuses the connection to its guest instead of a TCP handshake each time.
const httpAgent = new http.Agent({ keepAlive: true, maxSockets: 64, keepAliveMsecs: 10_000 });
// A local sandbox's socket is opened only through connectSandboxSocket (peer checked first).
const sandboxAgent = new SandboxSocketAgent({
  keepAlive: true,
  maxSockets: 64,
  keepAliveMsecs: 10_000,
});
const httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 64, keepAliveMsecs: 10_000 });

export interface GuestHttpAnswer {
  status: number;
  /** Parsed JSON, or undefined when the body was not JSON (or was asked for raw). */
  body: unknown;
  /** The body as received, when the request asked for `accept` other than JSON. */
  bytes?: Buffer;
  headers: http.IncomingHttpHeaders;
}

/** A request body sent as is (the archive's binary form) instead of JSON. */
export interface RawGuestBody {
  bytes: Uint8Array;
  contentType: string;
  headers: Record<string, string>;
}

/** The guest could not be reached: no connection, a refused peer, a broken answer. */
export class GuestUnreachableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GuestUnreachableError';
  }
}

/** The guest did not answer within the call's bound (it may have acted). */
export class GuestTimeoutError extends Error {
  constructor(ms: number) {
    super(`the guest did not answer within ${ms} ms`);
    this.name = 'GuestTimeoutError';
  }
}

/**
 * requestGuest sends one JSON request to a guest driver with its bearer token and reads the JSON
 * answer. It uses node:http with a keep-alive agent (not fetch) because the per-call cost is
 * part of the control plane's latency budget. The timeout covers the whole exchange. Only the
 * guest client (guest-client.ts) calls it: it alone holds opened tokens.
 */
export function requestGuest(input: {
  endpoint: string;
  token: string;
  method: 'GET' | 'POST';
  path: string;
  body: unknown;
  /** Sent instead of `body` as JSON. */
  raw?: RawGuestBody | undefined;
  /** What to ask for; a 200 of anything but JSON is answered as `bytes`. */
  accept?: string | undefined;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}): Promise<GuestHttpAnswer> {
  const url = new URL(input.path, input.endpoint);
  const isHttps = url.protocol === 'https:';
  // A local sandbox's guest listens on a unix socket (its network namespace is private); the
  // agent keys keep-alive connections by socket path as it does by host and port.
  let socketPath: string | null;
  try {
    socketPath = guestSocketPath(url);
  } catch (err) {
    return Promise.reject(new GuestUnreachableError((err as Error).message));
  }
  const payload =
    input.method !== 'POST'
      ? undefined
      : input.raw
        ? input.raw.bytes
        : Buffer.from(JSON.stringify(input.body ?? {}));
  const accept = input.accept ?? 'application/json';
  return new Promise((resolve, reject) => {
    const req = (isHttps ? https : http).request(
      // Over a socket the URL only gives the path; `localhost` is the Host header then.
      socketPath ? new URL(url.pathname + url.search, 'http://localhost') : url,
      {
        ...(socketPath ? { socketPath } : {}),
        method: input.method,
        agent: socketPath ? sandboxAgent : isHttps ? httpsAgent : httpAgent,
        headers: {
          authorization: `Bearer ${input.token}`,
          accept,
          ...(payload
            ? {
                'content-type': input.raw?.contentType ?? 'application/json',
                'content-length': payload.length,
                ...input.raw?.headers,
              }
            : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (err) => finish(new GuestUnreachableError(err.message)));
        res.on('end', () => {
          const all = Buffer.concat(chunks);
          const headers = res.headers;
          if (res.statusCode === 200 && !(headers['content-type'] ?? '').includes('json')) {
            finish(undefined, { status: 200, body: undefined, bytes: all, headers });
            return;
          }
          const text = all.toString('utf8');
          let body: unknown;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            body = undefined;
          }
          finish(undefined, { status: res.statusCode ?? 0, body, headers });
        });
      },
    );
    const timer = setTimeout(() => {
      finish(new GuestTimeoutError(input.timeoutMs));
      req.destroy();
    }, input.timeoutMs);
    const onAbort = () => {
      finish(new GuestTimeoutError(input.timeoutMs));
      req.destroy();
    };
    input.signal?.addEventListener('abort', onAbort, { once: true });
    let done = false;
    function finish(err?: Error, answer?: GuestHttpAnswer) {
      if (done) return;
      done = true;
      clearTimeout(timer);
      input.signal?.removeEventListener('abort', onAbort);
      if (err) reject(err);
      else resolve(answer!);
    }
    req.on('error', (err) => finish(new GuestUnreachableError(err.message)));
    req.end(payload);
  });
}

/**
 * openGuestSocket opens a guest WebSocket route with the bearer token. A local sandbox's guest
 * listens on a unix socket (http+unix://): ws speaks `ws+unix:`, and the connection is opened by
 * the peer-checking door (openSandboxConnection), never by ws itself.
 */
export function openGuestSocket(input: {
  endpoint: string;
  token: string;
  path: string;
  maxPayload: number;
}): WebSocket {
  const target = new URL(input.path, input.endpoint);
  const socketPath = guestSocketPath(target);
  const url = socketPath
    ? `ws+unix://${socketPath}:${target.pathname}`
    : `${target.protocol === 'https:' ? 'wss:' : 'ws:'}//${target.host}${target.pathname}`;
  return new WebSocket(url, {
    headers: { authorization: `Bearer ${input.token}` },
    perMessageDeflate: false,
    maxPayload: input.maxPayload,
    ...(socketPath ? { createConnection: openSandboxConnection as never } : {}),
  });
}
