import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ApiMetrics, registerMetrics } from '../metrics/api-metrics.js';
import { serveMetrics, type MetricsServerOptions } from '../metrics/metrics-server.js';
import { own } from './own.js';
import { Plugin } from './plugin-names.js';

/**
 * registerMetricsListener serves `metrics` on a private listener of its own (never on the public
 * API) for as long as the app runs: it opens with the app and closes with it.
 */
async function registerMetricsListener(
  app: FastifyInstance,
  metrics: ApiMetrics,
  options: MetricsServerOptions,
): Promise<string> {
  const server = await serveMetrics(metrics, options);
  own(app, 'metrics listener', () => server.close());
  return server.url;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's Prometheus series (routes observe what only they see, e.g. first actions). */
    metrics: ApiMetrics;
  }
}

export interface MetricsPluginOptions {
  /** Request timings (default: a new set reading pool sizes from the app's database). */
  metrics?: ApiMetrics | undefined;
  /** The private metrics listener (API_METRICS_*); without it the series are only timed. */
  listener?: MetricsServerOptions | undefined;
}

/**
 * metricsPlugin times every request of the public app and, when configured, serves the series on
 * the private listener, opened after the connections and closed before them.
 */
export const metricsPlugin = fp<MetricsPluginOptions>(
  async (app, options) => {
    const metrics = options.metrics ?? new ApiMetrics(app.connections.db);
    app.decorate('metrics', metrics);
    if (options.listener) {
      const url = await registerMetricsListener(app, metrics, options.listener);
      app.log.info({ url: `${url}/metrics` }, 'metrics listener');
    }
    registerMetrics(app, metrics);
  },
  { name: Plugin.metrics, dependencies: [Plugin.connections] },
);
