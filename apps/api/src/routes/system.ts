import { API_VERSION, CUBICLE_VERSION, Routes } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { GUEST_PROTOCOL_VERSION } from '@cubicle/contract/guest';
import { openApiDocument } from '@cubicle/contract/openapi';
import { pingDatabase } from '@cubicle/db';
import fp from 'fastify-plugin';
import { route } from '../lib/define-handler.js';
import { Plugin } from '../plugins/plugin-names.js';
import { registerDocsRoutes } from './docs.js';

/** A dependency probe for /healthz; it throws when the dependency is unusable. */
export type HealthCheck = () => Promise<unknown>;

/**
 * System routes: liveness with dependency checks (the database and Redis, plus `checks`),
 * versions, and the API reference. None needs a key.
 */
export const systemRoutes = fp<{ checks?: Record<string, HealthCheck> | undefined }>(
  async (app, options) => {
    const { db, redis } = app.connections;
    const checks: Record<string, HealthCheck> = {
      database: () => pingDatabase(db),
      redis: () => redis.ping(),
      ...options.checks,
    };
    const doc = openApiDocument();
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
    registerDocsRoutes(app, () => doc);
  },
  { name: Plugin.systemRoutes, dependencies: [Plugin.connections] },
);
