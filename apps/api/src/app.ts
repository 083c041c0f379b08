import { randomUUID } from 'node:crypto';
import { DEFAULT_BODY_LIMIT_BYTES } from '@cubicle/contract/api';
import { openApiDocument } from '@cubicle/contract/openapi';
import {
  announceRunsFinished,
  GUEST_CALL_MAX_WAIT_MS,
  GuestCalls,
  type Keyring,
} from '@cubicle/control-plane';
import { CreateClaimRequest } from '@cubicle/contract/api';
import type { KeyVerifierOptions } from '@cubicle/tenancy';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { registerIdentity } from './auth/register-identity.js';
import { registerErrorHandler, registerJsonBody, sendError } from '@cubicle/http';
import { ApiMetrics, registerMetrics } from './metrics/api-metrics.js';
import type { MetricsServerOptions } from './metrics/metrics-server.js';
import {
  MissingDependencyError,
  registerConnections,
  type ApiConnections,
} from './plugins/connections.js';
import { registerMetricsListener } from './plugins/metrics-listener.js';
import { closeRemainingWebSockets, registerWebSockets } from './plugins/websockets.js';
import { registerClaimRoutes } from './routes/claims.js';
import { registerDriveRoutes } from './routes/drive.js';
import { registerPoolRoutes } from './routes/pools.js';
import { registerSecretRoutes } from './routes/secrets.js';
import { registerRunRoutes } from './routes/runs.js';
import { registerSystemRoutes } from './routes/system.js';
import { registerTenantRoutes } from './routes/tenant.js';
import { registerWebhookRoutes } from './routes/webhooks.js';
import { registerUsageRoutes } from './routes/usage.js';
import { redactUrl } from './viewer/redact-url.js';
import { registerViewer } from './viewer/register-viewer.js';
import type { ViewerOptions } from './viewer/viewer-options.js';

export type { ViewerOptions };
export {
  MissingDependencyError,
  type ApiConnections,
  type Connections,
} from './plugins/connections.js';

/** A dependency probe for /healthz; it throws when the dependency is unusable. */
export type HealthCheck = () => Promise<unknown>;

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
};

/** Request ids from callers are kept when they look like ids, so logs join across services. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

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
 * process entry point adds only the listener and signal handling.
 */
export async function buildApp(options: BuildOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: withRequestSerializer(options.logger),
    // Routes apply their own published limits (bodyLimitOf); this covers the rest (/docs, /metrics).
    bodyLimit: DEFAULT_BODY_LIMIT_BYTES,
    // Explicit bounds: a slow client cannot hold a connection forever, but a request waiting for
    // its answer (a guest call at its bound, a claim's wait_seconds) is not a slow client.
    connectionTimeout: LONGEST_ANSWER_MS + SERVER_TIMEOUT_SLACK_MS,
    requestTimeout: LONGEST_ANSWER_MS + SERVER_TIMEOUT_SLACK_MS,
    keepAliveTimeout: 72_000,
    return503OnClosing: true,
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : `req_${randomUUID()}`;
    },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    // The router rejects some URLs before any hook or error handler runs; keep them in the envelope.
    frameworkErrors: (error, request, reply) =>
      error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? sendError(request, reply, 'invalid_id', 'a path parameter is too long')
        : sendError(request, reply, 'validation_failed', 'the request URL is malformed'),
  });
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  registerErrorHandler(app);
  registerJsonBody(app);
  if (!options.viewer) throw new MissingDependencyError('viewer options');
  if (!options.keyring) throw new MissingDependencyError('a keyring (CUBICLE_KEYRING)');
  if (!options.queuePrefix) throw new MissingDependencyError('a queue prefix (QUEUE_PREFIX)');
  // Opened first, closed last (onClose runs in reverse): queues, Redis, then Postgres.
  const { db, redis, queues } = await registerConnections(app, options, options.queuePrefix);
  const metrics = options.metrics ?? new ApiMetrics(db);
  if (options.metricsListener) {
    const url = await registerMetricsListener(app, metrics, options.metricsListener);
    app.log.info({ url: `${url}/metrics` }, 'metrics listener');
  }
  const prefix = options.queuePrefix;
  const keyring = options.keyring;
  registerIdentity(app, {
    db,
    redis,
    ...(options.keyVerifier ? { keyVerifier: options.keyVerifier } : {}),
  });
  registerTenantRoutes(app, db);
  registerWebhookRoutes(app, {
    db,
    keyring,
    allowPrivate: options.webhooks?.allowPrivate ?? false,
  });
  // Ends of claims and revoked tickets are announced here so every replica closes its streams.
  const events = { publisher: redis, prefix };
  await registerWebSockets(app);
  await registerViewer(app, { db, options: options.viewer, redis, events, keyring });
  const deps = { db, queues, events };
  // A queued run cancelled here ends here: its `run.finished` webhook is sent from here.
  const stopRunWebhooks = announceRunsFinished(deps);
  app.addHook('onClose', async () => stopRunWebhooks());
  registerPoolRoutes(app, deps);
  registerUsageRoutes(app, deps);
  registerClaimRoutes(app, { ...deps, keyring });
  registerSecretRoutes(app, { ...deps, keyring });
  // Driving a sandbox needs Redis pub/sub for answers: one subscriber connection per process.
  const subscriber = redis.duplicate();
  const guestCallOptions = { publisher: redis, subscriber, prefix };
  const guest = new GuestCalls(deps, guestCallOptions);
  registerDriveRoutes(app, deps, guest);
  app.addHook('onClose', async () => {
    await guest.close();
    subscriber.disconnect();
  });
  // Runs: events published on Redis, input queued there for the worker holding the run.
  await registerRunRoutes(app, { ...deps, redis, prefix, keyring }, redis);
  // After every route group's own preClose (their close frames): what is left gets 1001.
  closeRemainingWebSockets(app);
  registerMetrics(app, metrics);
  const doc = openApiDocument();
  registerSystemRoutes(
    app,
    {
      database: () => db.$queryRaw`SELECT 1`,
      redis: () => redis.ping(),
      ...options.checks,
    },
    () => doc,
  );
  await app.ready();
  return app;
}
