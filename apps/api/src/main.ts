#!/usr/bin/env node
import { parseKeyring, secretLogHooks } from '@cubicle/control-plane';
import { createDb } from '@cubicle/db';
import { createQueueConnection, JobQueues } from '@cubicle/queue';
import { generateViewerKeySet, parseViewerKeys } from '@cubicle/viewer';
import { loadApiEnv } from './env.js';
import { buildApp, redactPaths } from './app.js';
import { createRedis } from './lib/redis.js';
import { ApiMetrics } from './metrics/api-metrics.js';
import { serveMetrics, type MetricsServer } from './metrics/metrics-server.js';

// Parse configuration before anything starts: a bad variable stops the process here.
const env = loadApiEnv();

const db = createDb({ databaseUrl: env.DATABASE_URL });
const redis = createRedis(env.REDIS_URL, { maxRetriesPerRequest: 1 });
await redis.connect();
const queueConnection = createQueueConnection(env.REDIS_URL);
const queues = new JobQueues(queueConnection, env.QUEUE_PREFIX);

const viewerKeys = parseViewerKeys(env.CUBICLE_VIEWER_KEYS ?? generateViewerKeySet('ephemeral'));

const metrics = new ApiMetrics(db);
const app = await buildApp({
  metrics,
  // Redacted by path (credentials) and by value (secrets this process sealed lately).
  logger: {
    level: env.LOG_LEVEL,
    redact: { paths: redactPaths, censor: '[redacted]' },
    hooks: secretLogHooks(),
  },
  db,
  redis,
  queues,
  queuePrefix: env.QUEUE_PREFIX,
  // Secrets are sealed with the same keyring the worker opens them with.
  ...(env.CUBICLE_KEYRING ? { keyring: parseKeyring(env.CUBICLE_KEYRING) } : {}),
  webhooks: { allowPrivate: env.CUBICLE_WEBHOOKS_ALLOW_PRIVATE },
  viewer: {
    keys: viewerKeys,
    webUrl: env.CUBICLE_WEB_URL,
    ...(env.CUBICLE_PUBLIC_API_URL ? { publicApiUrl: env.CUBICLE_PUBLIC_API_URL } : {}),
    limits: {
      perTicket: env.VIEWER_MAX_STREAMS_PER_TICKET,
      perTenant: env.VIEWER_MAX_STREAMS_PER_TENANT,
    },
  },
  checks: {
    database: () => db.$queryRaw`SELECT 1`,
    redis: () => redis.ping(),
  },
});

if (!env.CUBICLE_VIEWER_KEYS)
  app.log.warn(
    'CUBICLE_VIEWER_KEYS is not set: viewer tickets are signed with a key made at start-up and stop working when this process restarts',
  );

const metricsServer: MetricsServer | undefined =
  env.API_METRICS_PORT === undefined
    ? undefined
    : await serveMetrics(metrics, {
        host: env.API_METRICS_HOST,
        port: env.API_METRICS_PORT,
        ...(env.API_METRICS_TOKEN ? { token: env.API_METRICS_TOKEN } : {}),
      });
let closing = false;
/** shutdown stops accepting, drains in-flight requests, then closes Redis and Prisma (reverse of start-up). */
async function shutdown(signal: string) {
  if (closing) return;
  closing = true;
  app.log.info({ signal }, 'shutting down');
  const force = setTimeout(() => process.exit(1), 15_000);
  force.unref();
  // app.close() stops accepting and waits for in-flight requests (viewer streams get a close
  // frame first). A keep-alive connection busy when it began turns idle once its response is
  // sent, and would hold the close for the keep-alive timeout: close such connections as they idle.
  const idleSweep = setInterval(() => app.server.closeIdleConnections(), 100);
  await app.close();
  clearInterval(idleSweep);
  await metricsServer?.close();
  await queues.close();
  queueConnection.disconnect();
  redis.disconnect();
  await db.$disconnect();
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));

await app.listen({ host: env.API_HOST, port: env.API_PORT });
if (metricsServer) app.log.info({ url: `${metricsServer.url}/metrics` }, 'metrics listener');
