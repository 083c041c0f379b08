import { createServer, type Server } from 'node:http';

/** One dependency check of the readiness probe; it throws (or rejects) when the dependency is down. */
export type HealthCheck = () => Promise<unknown>;

export interface HealthServerOptions {
  host: string;
  /** 0 picks a free port (tests); the bound port is `port()` after `listening`. */
  port: number;
  /** Run by `GET /readyz`, each bounded by `checkTimeoutMs`. */
  checks: Record<string, HealthCheck>;
  /** True while the worker takes jobs (every BullMQ Worker running). */
  running: () => boolean;
  checkTimeoutMs?: number;
}

export interface HealthServer {
  /** Resolves once the listener is bound. */
  listening: Promise<void>;
  port(): number;
  /** From now on both endpoints answer 503: the process is draining. */
  markClosing(): void;
  close(): Promise<void>;
}

/**
 * startHealthServer serves the worker's probes for Kubernetes (the chart's liveness and
 * readiness probes):
 * - `GET /healthz` (liveness): 200 while the process serves and is not shutting down.
 * - `GET /readyz` (readiness): 200 when the database and Redis answer within the timeout and the
 *   job workers run; 503 with the failing check's name otherwise.
 * The answers carry no secrets (check names and error classes only).
 */
export function startHealthServer(options: HealthServerOptions): HealthServer {
  const timeoutMs = options.checkTimeoutMs ?? 2000;
  let closing = false;

  async function readiness(): Promise<{ ok: boolean; checks: Record<string, string> }> {
    const entries = await Promise.all(
      Object.entries(options.checks).map(async ([name, check]) => {
        try {
          await Promise.race([
            check(),
            new Promise((_, reject) => {
              setTimeout(() => reject(new Error('timeout')), timeoutMs).unref();
            }),
          ]);
          return [name, 'ok'] as const;
        } catch (err) {
          return [
            name,
            err instanceof Error && err.message === 'timeout' ? 'timeout' : 'down',
          ] as const;
        }
      }),
    );
    const checks: Record<string, string> = Object.fromEntries(entries);
    checks.workers = options.running() ? 'ok' : 'stopped';
    return { ok: Object.values(checks).every((v) => v === 'ok'), checks };
  }

  const server: Server = createServer((req, res) => {
    const send = (status: number, body: unknown) =>
      res
        .writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' })
        .end(JSON.stringify(body));
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, { status: 'method' });
    if (path === '/healthz') {
      return closing ? send(503, { status: 'closing' }) : send(200, { status: 'ok' });
    }
    if (path === '/readyz') {
      if (closing) return send(503, { status: 'closing' });
      void readiness().then(
        (r) => send(r.ok ? 200 : 503, { status: r.ok ? 'ok' : 'unavailable', checks: r.checks }),
        () => send(503, { status: 'unavailable' }),
      );
      return;
    }
    send(404, { status: 'not_found' });
  });
  // Probes are short requests; a stuck client must not hold the process open on shutdown.
  server.keepAliveTimeout = 1000;
  server.requestTimeout = 10_000;
  const listening = new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });

  return {
    listening,
    port: () => {
      const address = server.address();
      return typeof address === 'object' && address ? address.port : options.port;
    },
    markClosing: () => {
      closing = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
