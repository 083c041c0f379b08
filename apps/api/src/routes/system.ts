import { API_VERSION, CUBICLE_VERSION, Routes } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { GUEST_PROTOCOL_VERSION } from '@cubicle/contract/guest';
import type { FastifyInstance } from 'fastify';
import { route } from '../lib/define-handler.js';
import { registerDocsRoutes } from './docs.js';
import type { HealthCheck } from '../app.js';

/** System routes: liveness with dependency checks, versions, and the API reference. */
export function registerSystemRoutes(
  app: FastifyInstance,
  checks: Record<string, HealthCheck>,
  openApi: () => unknown,
) {
  route(app, Routes.healthz, async () => {
    const entries = await Promise.all(
      Object.entries(checks).map(async ([name, check]) => {
        try {
          await check();
          return [name, 'ok'] as const;
        } catch {
          return [name, 'error'] as const;
        }
      }),
    );
    const results = Object.fromEntries(entries);
    // 503 when a dependency is down lets load balancers route around this replica.
    if (!entries.every(([, r]) => r === 'ok')) {
      throw new AppError('service_unavailable', 'a dependency check failed', { checks: results });
    }
    return { status: 200 as const, body: { status: 'ok' as const, checks: results } };
  });

  route(app, Routes.version, () => ({
    status: 200 as const,
    body: {
      service: 'cubicle-api' as const,
      version: CUBICLE_VERSION,
      api_version: API_VERSION,
      guest_protocol_version: GUEST_PROTOCOL_VERSION,
      node: process.versions.node,
    },
  }));

  // The interactive reference at /docs (what people type), the document at /docs/openapi.json.
  registerDocsRoutes(app, openApi);
}
