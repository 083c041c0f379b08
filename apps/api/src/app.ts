import { DEFAULT_BODY_LIMIT_BYTES, CreateClaimRequest } from '@cubicle/contract/api';
import {
  GUEST_CALL_MAX_WAIT_MS,
  type EgressInstallation,
  type Keyring,
  type ObjectStore,
} from '@cubicle/control-plane';
import { createServer, registerJsonBody, sendError } from '@cubicle/http';
import type { KeyVerifierOptions } from '@cubicle/tenancy';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { identityPlugin } from './auth/identity-plugin.js';
import { mcpPlugin } from './mcp/mcp-plugin.js';
import type { ApiMetrics } from './metrics/api-metrics.js';
import type { MetricsServerOptions } from './metrics/metrics-server.js';
import {
  connectionsPlugin,
  MissingDependencyError,
  type ApiConnections,
} from './plugins/connections.js';
import { metricsPlugin } from './plugins/metrics.js';
import { runFinishedWebhooksPlugin } from './plugins/run-finished-webhooks.js';
import { closeRemainingWebSocketsPlugin, websocketsPlugin } from './plugins/websockets.js';
import { claimRoutes } from './routes/claims.js';
import { egressRoutes } from './routes/egress.js';
import { driveRoutes } from './routes/drive.js';
import { poolRoutes } from './routes/pools.js';
import { runEventStreams } from './routes/run-event-streams.js';
import { runRoutes } from './routes/runs.js';
import { secretRoutes } from './routes/secrets.js';
import { systemRoutes, type HealthCheck } from './routes/system.js';
import { tenantRoutes } from './routes/tenant.js';
import { usageRoutes } from './routes/usage.js';
import { webhookRoutes } from './routes/webhooks.js';
import { redactUrl } from './viewer/redact-url.js';
import { viewerPlugin } from './viewer/viewer-plugin.js';
import { replayReadAuth } from './replay/replay-auth.js';
import { replayRoutes } from './replay/replay-routes.js';
import { recordingRoutes } from './routes/recordings.js';
import type { ViewerOptions } from './viewer/viewer-options.js';

export type { ViewerOptions };
export {
  MissingDependencyError,
  type ApiConnections,
  type Connections,
} from './plugins/connections.js';

export type { HealthCheck };

/**
 * BuildOptions are everything the API needs; none of its dependencies is optional, so a process
 * missing one fails at start (MissingDependencyError, or its env.ts naming the variable) instead
 * of serving without the routes that need it.
 */
export type BuildOptions = ApiConnections & {
  logger?: FastifyServerOptions['logger'];
  /** Probes added to /healthz beside the database and Redis ones. */
  checks?: Record<string, HealthCheck>;
  /** BullMQ prefix (must match the worker's); scopes queues and pub/sub channels. */
  queuePrefix: string;
  /** Key cache and last_used_at tuning (tests shorten the cache to see revocations at once). */
  keyVerifier?: KeyVerifierOptions;
  /** Request timings (default: a new set); served only on the private metrics listener. */
  metrics?: ApiMetrics;
  /** The private metrics listener, opened and closed with the app (API_METRICS_*). */
  metricsListener?: MetricsServerOptions;
  /** Viewer tickets and the stream proxy (revocations reach every replica through Redis). */
  viewer: ViewerOptions;
  /** Seals secret values and webhook signing secrets at rest (CUBICLE_KEYRING). */
  keyring: Keyring;
  /**
   * `allowPrivate` is the operator's opt-out of the webhook address guard
   * (CUBICLE_WEBHOOKS_ALLOW_PRIVATE), default off.
   */
  webhooks?: { allowPrivate?: boolean };
  /** The operator's egress settings (CUBICLE_EGRESS_*); default: every pool `none`, no range opened. */
  egress?: EgressInstallation;
  /** The object store (CUBICLE_OBJECT_STORE, objectStoreOf); default: none, object calls fail 503. */
  objectStore?: ObjectStore;
};

/** Paths in logs that may carry secrets; pino replaces their values. */
export const redactPaths = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["idempotency-key"]',
  'res.headers["set-cookie"]',
  '*.password',
  '*.secret',
  '*.token',
  '*.key',
];

/**
 * withRequestSerializer logs requests like Fastify does, but with credentials in query strings
 * (the viewer stream's `?ticket=`) replaced: a ticket is a bearer credential until it expires.
 */
function withRequestSerializer(
  logger: FastifyServerOptions['logger'],
): FastifyServerOptions['logger'] {
  if (!logger) return false;
  const base = typeof logger === 'object' ? logger : {};
  return {
    ...base,
    serializers: {
      req: (req: {
        method: string;
        url: string;
        host?: string;
        socket?: { remoteAddress?: string; remotePort?: number };
      }) => ({
        method: req.method,
        url: redactUrl(req.url),
        host: req.host,
        remoteAddress: req.socket?.remoteAddress,
        remotePort: req.socket?.remotePort,
      }),
      ...base.serializers,
    },
  };
}

/**
 * LONGEST_ANSWER_MS is the longest a request may legitimately wait for its answer with nothing on
 * the wire: a guest call at the catalog's cap, or a claim at the largest `wait_seconds`. The
 * server's socket timeouts derive from it rather than from a number of their own.
 */
export const LONGEST_ANSWER_MS = Math.max(
  GUEST_CALL_MAX_WAIT_MS,
  (CreateClaimRequest.shape.wait_seconds.unwrap().maxValue ?? 0) * 1000,
);
const SERVER_TIMEOUT_SLACK_MS = 10_000;

/**
 * buildApp assembles the API without listening, so tests drive it with `inject` and the
 * process entry point adds only the listener and signal handling. The app is the list of plugins
 * below, in start-up order (closing runs it backwards: Postgres, opened first, closes last). Each
 * plugin names the plugins it needs, and Fastify refuses to start when one is missing or comes
 * later in the list.
 */
export async function buildApp(options: BuildOptions): Promise<FastifyInstance> {
  if (!options.viewer) throw new MissingDependencyError('viewer options');
  if (!options.keyring) throw new MissingDependencyError('a keyring (CUBICLE_KEYRING)');
  if (!options.queuePrefix) throw new MissingDependencyError('a queue prefix (QUEUE_PREFIX)');
  const { keyring } = options;
  const app = createServer({
    logger: withRequestSerializer(options.logger),
    // Routes apply their own published limits (bodyLimitOf); this covers the rest (/docs, /metrics).
    bodyLimit: DEFAULT_BODY_LIMIT_BYTES,
    // Explicit bounds: a slow client cannot hold a connection forever, but a request waiting for
    // its answer (a guest call at its bound, a claim's wait_seconds) is not a slow client.
    connectionTimeout: LONGEST_ANSWER_MS + SERVER_TIMEOUT_SLACK_MS,
    requestTimeout: LONGEST_ANSWER_MS + SERVER_TIMEOUT_SLACK_MS,
    keepAliveTimeout: 72_000,
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    // The router rejects some URLs before any hook or error handler runs; keep them in the envelope.
    frameworkErrors: (error, request, reply) =>
      error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? sendError(request, reply, 'invalid_id', 'a path parameter is too long')
        : sendError(request, reply, 'validation_failed', 'the request URL is malformed'),
  });
  registerJsonBody(app);

  await app
    .register(connectionsPlugin, {
      given: options,
      queuePrefix: options.queuePrefix,
      keyring,
      allowPrivateWebhooks: options.webhooks?.allowPrivate ?? false,
      egress: options.egress,
      objectStore: options.objectStore,
    })
    .register(metricsPlugin, { metrics: options.metrics, listener: options.metricsListener })
    .register(identityPlugin, { keyVerifier: options.keyVerifier })
    .register(tenantRoutes)
    .register(webhookRoutes)
    .register(websocketsPlugin)
    .register(viewerPlugin, { options: options.viewer })
    .register(runFinishedWebhooksPlugin)
    .register(poolRoutes)
    .register(usageRoutes)
    .register(claimRoutes)
    .register(secretRoutes)
    .register(driveRoutes)
    .register(mcpPlugin, { keys: options.viewer.keys, publicApiUrl: options.viewer.publicApiUrl })
    .register(runRoutes)
    .register(runEventStreams)
    .register(egressRoutes)
    .register(replayRoutes, { keys: options.viewer.keys, webUrl: options.viewer.webUrl })
    .register(recordingRoutes, {
      // The recording and its media also take a replay link's token (the share page's player).
      authenticate: (app) =>
        replayReadAuth(app, { db: app.connections.db, keys: options.viewer.keys }),
    })
    .register(closeRemainingWebSocketsPlugin)
    .register(systemRoutes, { checks: options.checks });
  await app.ready();
  return app;
}
