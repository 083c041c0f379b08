import { request, type IncomingMessage, type ServerResponse } from 'node:http';
import { isIPv4, type Socket } from 'node:net';
import { firstBytesWaitMs, readFirstBytes } from '../point/sandbox-attachment.js';
import { forbidden, type SandboxGate } from '../point/sandbox-gate.js';

// The egress point's HTTP proxy side for Kubernetes sandboxes: CONNECT tunnels and absolute-form
// http:// requests, each judged by the gate of the sandbox they come from.

/** The gate of the sandbox at a source address (null: no sandbox's Pod). */
export type GateOf = (address: string | undefined) => Promise<SandboxGate | null>;

/** Proxy request headers that concern the hop to the proxy, never the origin. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
]);

/**
 * serveConnect serves CONNECT host:port: the host is decided and resolved under the sandbox's policy
 * (a refusal is a 403 naming the rule), then the tunnel's first bytes are judged like any
 * connection — by the SNI when there is one (which must be at the address), else as the CONNECT
 * host — and spliced.
 */
export async function serveConnect(
  gateOf: GateOf,
  req: IncomingMessage,
  socket: Socket,
  head: Buffer,
): Promise<void> {
  socket.on('error', () => undefined);
  const gate = await gateOf(socket.remoteAddress);
  if (!gate) return void socket.end(forbidden('egress:unknown-source'));
  const target = /^([^:/\s]+):(\d{1,5})$/.exec(req.url ?? '');
  const port = Number(target?.[2]);
  if (!target || port < 1 || port > 65535) return void socket.end(badRequest());
  const resolved = await resolveHost(gate, target[1]!.toLowerCase(), port);
  if (resolved.kind === 'refused') return void socket.end(forbidden(resolved.rule));
  if (resolved.kind === 'unresolved') return void socket.end(badGateway());
  socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
  readFirstBytes(
    socket,
    // As for a local connection: web ports wait for the SNI, others judge soon by address.
    firstBytesWaitMs(port),
    (first, peeked) => {
      // No name in the tunnel's bytes: the CONNECT host is the name stated.
      const named =
        (peeked.kind === 'tls' || peeked.kind === 'http') && peeked.name === null && resolved.name
          ? { kind: peeked.kind, name: resolved.name }
          : peeked;
      void gate.judge(socket, resolved.ip, port, first, named);
    },
    head,
  );
}

/** serveForward serves an absolute-form HTTP request (http:// only), judged per request. */
export async function serveForward(
  gateOf: GateOf,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const gate = await gateOf(req.socket.remoteAddress);
  if (!gate) return refuse(res, 'egress:unknown-source');
  let url: URL;
  try {
    url = new URL(req.url ?? '');
  } catch {
    return void res.writeHead(400, TEXT).end(BAD_REQUEST);
  }
  if (url.protocol !== 'http:' || url.username || url.password)
    return void res.writeHead(400, TEXT).end(BAD_REQUEST);
  const host = url.hostname.toLowerCase();
  const port = Number(url.port || 80);
  const resolved = await resolveHost(gate, host, port);
  if (resolved.kind === 'refused') return refuse(res, resolved.rule);
  if (resolved.kind === 'unresolved') return void res.writeHead(502, TEXT).end(UNRESOLVED);
  const { attempt, decision } = await gate.decide(resolved.ip, port, resolved.name);
  if (!decision.allowed) {
    gate.deny('tcp', attempt.name ?? null, resolved.ip, port, decision);
    return refuse(res, decision.rule);
  }
  gate.allowed(attempt, decision);
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(req.headers))
    if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
  const upstream = request(
    {
      host: resolved.ip,
      port,
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers: { ...headers, host: url.host },
      agent: false,
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on('error', () => {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
    res.end('Cubicle egress: the destination could not be reached\n');
  });
  req.pipe(upstream);
}

/**
 * resolveHost turns a proxy request's host into an address under the gate's policy: a name is
 * looked up (decided, filtered, remembered; refusals reported by the gate), an IPv4 literal
 * taken as is (judged by address when connecting). A refused name is reported as a TCP
 * connection to `port`: the sandbox asked for a connection, not a DNS answer.
 */
async function resolveHost(
  gate: SandboxGate,
  host: string,
  port: number,
): Promise<
  | { kind: 'address'; ip: string; name: string | null }
  | { kind: 'refused'; rule: string }
  | { kind: 'unresolved' }
> {
  if (isIPv4(host)) return { kind: 'address', ip: host, name: null };
  let found;
  try {
    found = await gate.lookup(host, undefined, { protocol: 'tcp', port });
  } catch {
    return { kind: 'unresolved' };
  }
  if (found.kind === 'denied') return { kind: 'refused', rule: found.decision.rule };
  if (found.kind !== 'addresses') return { kind: 'unresolved' };
  return { kind: 'address', ip: found.addresses[0]!, name: host };
}

const TEXT = { 'content-type': 'text/plain', connection: 'close' };
const BAD_REQUEST = 'Cubicle egress: not a request it can proxy\n';
const UNRESOLVED = 'Cubicle egress: the name could not be resolved\n';
const plain = (status: string, body: string) =>
  `HTTP/1.1 ${status}\r\ncontent-type: text/plain\r\nconnection: close\r\n` +
  `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
const badRequest = () => plain('400 Bad Request', BAD_REQUEST);
const badGateway = () => plain('502 Bad Gateway', UNRESOLVED);

/** refuse answers a proxied request with a 403 naming the rule (as the local point does). */
function refuse(res: ServerResponse, rule: string): void {
  res
    .writeHead(403, { ...TEXT, 'x-cubicle-egress-rule': encodeURIComponent(rule) })
    .end(`Blocked by Cubicle's egress policy (${rule}).\n`);
}
