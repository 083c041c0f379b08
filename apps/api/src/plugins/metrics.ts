import type { FastifyInstance } from 'fastify';
import type { ApiMetrics } from '../metrics/api-metrics.js';
import { serveMetrics, type MetricsServerOptions } from '../metrics/metrics-server.js';
import { own } from './own.js';

/**
 * registerMetricsListener serves `metrics` on a private listener of its own (never on the public
 * API) for as long as the app runs: it opens with the app and closes with it.
 */
export async function registerMetricsListener(
  app: FastifyInstance,
  metrics: ApiMetrics,
  options: MetricsServerOptions,
): Promise<string> {
  const server = await serveMetrics(metrics, options);
  own(app, 'metrics listener', () => server.close());
  return server.url;
}
