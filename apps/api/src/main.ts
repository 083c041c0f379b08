#!/usr/bin/env node
import {
  egressInstallationOf,
  objectStoreOf,
  parseKeyring,
  secretLogHooks,
} from '@cubicle/control-plane';
import { generateViewerKeySet, parseViewerKeys } from '@cubicle/viewer';
import { loadApiEnv } from './env.js';
import { buildApp, redactPaths } from './app.js';
import { closeOnSignals } from './plugins/close-on-signals.js';

// Parse configuration before anything starts: a bad variable stops the process here.
const env = loadApiEnv();

// The app opens every connection and closes each in its onClose hook: shutdown is app.close().
const app = await buildApp({
  databaseUrl: env.DATABASE_URL,
  redisUrl: env.REDIS_URL,
  queuePrefix: env.QUEUE_PREFIX,
  // Redacted by path (credentials) and by value (secrets this process sealed lately).
  logger: {
    level: env.LOG_LEVEL,
    redact: { paths: redactPaths, censor: '[redacted]' },
    hooks: secretLogHooks(),
  },
  // Secrets are sealed with the same keyring the worker opens them with.
  keyring: parseKeyring(env.CUBICLE_KEYRING),
  webhooks: { allowPrivate: env.CUBICLE_WEBHOOKS_ALLOW_PRIVATE },
  egress: egressInstallationOf(env),
  objectStore: objectStoreOf(env),
  viewer: {
    keys: parseViewerKeys(env.CUBICLE_VIEWER_KEYS ?? generateViewerKeySet('ephemeral')),
    webUrl: env.CUBICLE_WEB_URL,
    ...(env.CUBICLE_PUBLIC_API_URL ? { publicApiUrl: env.CUBICLE_PUBLIC_API_URL } : {}),
    limits: {
      perTicket: env.VIEWER_MAX_STREAMS_PER_TICKET,
      perTenant: env.VIEWER_MAX_STREAMS_PER_TENANT,
    },
  },
  ...(env.API_METRICS_PORT === undefined
    ? {}
    : {
        metricsListener: {
          host: env.API_METRICS_HOST,
          port: env.API_METRICS_PORT,
          ...(env.API_METRICS_TOKEN ? { token: env.API_METRICS_TOKEN } : {}),
        },
      }),
});

if (!env.CUBICLE_VIEWER_KEYS)
  app.log.warn(
    'CUBICLE_VIEWER_KEYS is not set: viewer tickets are signed with a key made at start-up and stop working when this process restarts',
  );

closeOnSignals(app, { graceMs: 15_000 });
await app.listen({ host: env.API_HOST, port: env.API_PORT });
