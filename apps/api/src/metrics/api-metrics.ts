import { poolSandboxCountRows } from '@cubicle/control-plane';
import type { Db } from '@cubicle/db';
import type { FastifyInstance } from 'fastify';
import { Gauge, Histogram, Registry } from 'prom-client';

/**
 * ApiMetrics are the API's Prometheus series. Pool sizes are read from the database at scrape
 * time (one grouped query), so every replica reports the same truth without keeping counters.
 */
export class ApiMetrics {
  readonly registry = new Registry();
  readonly claimLatency = new Histogram({
    name: 'cubicle_claim_duration_seconds',
    help: 'Time to answer POST /v1/pools/{name}/claims, by response status',
    labelNames: ['status'],
    buckets: [0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1, 5, 30],
    registers: [this.registry],
  });
  /**
   * The SLO an agent's owner feels: claim created → its first ActionResult with effect
   * `confirmed`. Observed once per claim, by the replica that answered that action (the worker
   * stamps the claim and says so in the call's outcome). Labelled as the claim latency is: no
   * tenant or pool (those series grow with customers; per pool it is in the pool's insights).
   */
  readonly firstConfirmedAction = new Histogram({
    name: 'cubicle_time_to_first_confirmed_action_seconds',
    help: 'Time from a claim being created to its first ActionResult with effect confirmed',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [this.registry],
  });
  readonly requestDuration = new Histogram({
    name: 'cubicle_http_request_duration_seconds',
    help: 'HTTP request duration by route and status class',
    labelNames: ['route', 'method', 'status'],
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
    registers: [this.registry],
  });

  constructor(db?: Db) {
    if (!db) return;
    new Gauge({
      name: 'cubicle_pool_sandboxes',
      help: 'Sandboxes per pool and state (deleted excluded)',
      labelNames: ['tenant', 'pool', 'state'],
      registers: [this.registry],
      async collect() {
        const rows = await poolSandboxCountRows(db);
        this.reset();
        for (const r of rows) this.set({ tenant: r.tenant_id, pool: r.name, state: r.state }, r.n);
      },
    });
  }
}

/**
 * registerMetrics times every request of the public app. The series are served elsewhere
 * (serveMetrics, on a private listener): they name tenants and pools, so the public API never
 * answers them.
 */
export function registerMetrics(app: FastifyInstance, metrics: ApiMetrics) {
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const seconds = reply.elapsedTime / 1000;
    metrics.requestDuration.observe(
      { route, method: request.method, status: `${Math.floor(reply.statusCode / 100)}xx` },
      seconds,
    );
    if (request.method === 'POST' && route === '/v1/pools/:name/claims') {
      metrics.claimLatency.observe({ status: String(reply.statusCode) }, seconds);
    }
  });
}
