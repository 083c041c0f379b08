import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ApiMetrics } from './api-metrics.js';

export interface MetricsServerOptions {
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  /** When set, scrapes must send `Authorization: Bearer <token>`. */
  token?: string;
}

export interface MetricsServer {
  /** The bound address, e.g. `http://127.0.0.1:9464`. */
  url: string;
  close(): Promise<void>;
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * serveMetrics answers `GET /metrics` on a listener of its own, apart from the public API: the
 * series are labelled with tenant ids and pool names, so they are for the operator's scraper
 * (loopback by default, a token when bound wider), never for tenants. Anything else is 404.
 */
export async function serveMetrics(
  metrics: ApiMetrics,
  options: MetricsServerOptions,
): Promise<MetricsServer> {
  const expected = options.token === undefined ? undefined : digest(`Bearer ${options.token}`);
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') return void res.writeHead(404).end();
    // Compare digests: equal lengths for timingSafeEqual, and no early exit on a prefix.
    if (expected && !timingSafeEqual(digest(req.headers.authorization ?? ''), expected))
      return void res.writeHead(401, { 'www-authenticate': 'Bearer' }).end();
    metrics.registry.metrics().then(
      (body) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(body),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
