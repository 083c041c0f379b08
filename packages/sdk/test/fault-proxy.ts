import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

/** SeenRequest is what the proxy recorded of one request it received. */
export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
}

/**
 * Fault decides what the proxy does with one request: pass it on, pass it on and then cut the
 * client's connection instead of answering (the server did the work, the client never hears),
 * answer by itself, or pass the answer on but cut it after `afterBytes` of the body.
 */
export type Fault =
  | { kind: 'forward' }
  | { kind: 'drop_after_upstream' }
  | { kind: 'answer'; status: number; headers?: Record<string, string>; body: unknown }
  | { kind: 'cut_body'; when: (bodySoFar: string) => boolean };

/**
 * startFaultProxy is a loopback HTTP proxy in front of the live API, for faults a test must
 * cause on purpose: a lost answer, a 429, a dropped event stream. `decide` sees each request
 * with its index among those of the same method and path.
 */
export async function startFaultProxy(
  upstream: string,
  decide: (req: SeenRequest, nth: number) => Fault,
) {
  const seen: SeenRequest[] = [];
  const target = new URL(upstream);
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const entry = { method: req.method!, path: req.url!, headers: req.headers };
    const nth = seen.filter((s) => s.method === entry.method && s.path === entry.path).length;
    seen.push(entry);
    const fault = decide(entry, nth);
    if (fault.kind === 'answer') {
      res.writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers });
      res.end(JSON.stringify(fault.body));
      req.resume();
      return;
    }
    const up = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host },
      },
      (upRes) => {
        if (fault.kind === 'drop_after_upstream') {
          upRes.resume();
          upRes.once('end', () => res.socket?.destroy());
          return;
        }
        res.writeHead(upRes.statusCode!, upRes.headers);
        let soFar = '';
        upRes.on('data', (chunk: Buffer) => {
          if (fault.kind !== 'cut_body') return void res.write(chunk);
          soFar += chunk.toString();
          if (!fault.when(soFar)) return void res.write(chunk);
          // Cut only once this chunk has left the process: destroying the socket
          // at once drops whatever is still buffered, and the client would see
          // less than the fault promised (CI saw the cut land after event 1).
          upRes.destroy();
          res.write(chunk, () => res.socket?.destroy());
        });
        upRes.once('end', () => res.end());
      },
    );
    up.once('error', () => res.socket?.destroy());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
