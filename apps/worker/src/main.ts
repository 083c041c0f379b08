#!/usr/bin/env node
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import {
  announceRunsFinished,
  createResources,
  egressCredentialsOf,
  egressDenialSink,
  egressInstallationOf,
  egressPolicySource,
  objectStoreOf,
  parseKeyring,
  secretLogHooks,
  startRecordingPuller,
} from '@cubicle/control-plane';
import { createDb, pingDatabase } from '@cubicle/db';
import { createQueueConnection, JobQueues, startWorkers } from '@cubicle/queue';
import { pino } from 'pino';
import { createBackends, localEgressOf } from './backends.js';
import { loadWorkerEnv } from './env.js';
import { GuestQueues } from './guest-queues.js';
import { buildHandlers, staticQueues } from './handlers.js';
import { buildWebhookHandlers, webhookOptionsOf } from './webhook-handlers.js';
import { startHealthServer } from './health.js';
import { startRunSupervision } from './run-supervision.js';
import { WorkerMetrics } from './metrics.js';
import { closeOnSignals, OwnedResources } from './owned-resources.js';
import { buildUsageHandlers, usageQueues } from './usage-rollup.js';

// Parse configuration before anything starts: a bad variable stops the process here.
const env = loadWorkerEnv();
// Secret values the worker opened lately are redacted from every line (secretLogHooks).
const log = pino({
  level: env.LOG_LEVEL,
  base: { service: 'cubicle-worker' },
  hooks: secretLogHooks(),
});

// Everything opened below is owned here and closed in reverse order on SIGTERM (closeOnSignals).
const owned = new OwnedResources(log);
const db = owned.own('postgres', createDb({ databaseUrl: env.DATABASE_URL }), (d) =>
  d.$disconnect(),
);
await pingDatabase(db);
const connection = owned.own('redis', createQueueConnection(env.REDIS_URL), (c) => c.disconnect());
const queues = owned.own('queues', new JobQueues(connection, env.QUEUE_PREFIX), (q) => q.close());
// Backends with background work (Kubernetes watches) stop it once no job needs them.
// Local sandboxes' way out (root only); started below once the control plane's resources exist.
const localEgress = localEgressOf(env, log);
const keyring = parseKeyring(env.CUBICLE_KEYRING);
// Sandbox Pods trust the installation's egress CA when the Kubernetes point injects credentials
// (its key stays sealed in the database; only the certificate goes to sandboxes).
const egressCa = () =>
  egressCredentialsOf({ db, keyring }, { inject: env.CUBICLE_EGRESS_INJECT }).then(
    (credentials) => credentials?.ca.certPem ?? null,
    (err: unknown) => {
      log.error(
        { err: err instanceof Error ? err.message : String(err) },
        'the egress CA is unavailable: sandbox Pods do not trust it (nothing is injected)',
      );
      return null;
    },
  );
const backends = owned.own(
  'backends',
  await createBackends(env, log, localEgress, egressCa),
  (all) => Promise.all(Object.values(all).map((b) => b?.close?.())),
);
// The control plane's resources over these connections, made once. Claims the worker ends (TTL,
// idle, max lifetime, lost sandbox) close their viewer streams through `redis`.
const deps = createResources({
  db,
  queues,
  redis: connection,
  prefix: env.QUEUE_PREFIX,
  backends,
  keyring,
  webhooks: webhookOptionsOf(env),
  egress: egressInstallationOf(env),
  objectStore: objectStoreOf(env),
});
if (localEgress) {
  const egressSubscriber = owned.own(
    'egress subscriber',
    createQueueConnection(env.REDIS_URL),
    (c) => c.disconnect(),
  );
  // Bound credentials need the installation's CA (made once, key sealed in the database). Without
  // it (openssl missing, a keyring that no longer opens it) egress works and injects nothing.
  const credentials = await egressCredentialsOf(deps, {
    inject: env.CUBICLE_EGRESS_INJECT,
    upstreamCaPath: env.CUBICLE_EGRESS_UPSTREAM_CA,
  }).catch((err: unknown) => {
    log.error(
      { err: err instanceof Error ? err.message : String(err) },
      'the egress CA is unavailable: credentials bound to hosts are not injected',
    );
    return undefined;
  });
  // A machine without nftables (or with the link range taken) still runs desktops, offline.
  await localEgress
    .start(
      egressPolicySource({ ...deps, subscriber: egressSubscriber, prefix: env.QUEUE_PREFIX }),
      egressDenialSink(deps),
      credentials,
    )
    .catch((err: unknown) =>
      log.error(
        { err: err instanceof Error ? err.message : String(err) },
        'the egress point could not start: local sandboxes keep loopback only (egress none)',
      ),
    );
  owned.own('local egress', localEgress, (e) => e.close());
}
const metrics = new WorkerMetrics();
// Runs that end in this process are announced to webhooks (`run.finished`).
owned.own('run webhooks', announceRunsFinished(deps), (stop) => stop());
// Runs hold their guest streams here; started before the `runs` queue is served.
const runSubscriber = owned.own('run subscriber', createQueueConnection(env.REDIS_URL), (c) =>
  c.disconnect(),
);
const runs = await startRunSupervision(deps, { subscriber: runSubscriber, log });
owned.own('runs', runs, (r) => r.close());
// Recorded claims' video: finished segments are pulled from their guests and stored as they come.
const recordings = startRecordingPuller(deps, {
  owner: `worker-${process.pid}-${randomUUID().slice(0, 8)}`,
  log,
});
owned.own('recordings', recordings, (r) => r.close());

const workerConnection = owned.own('worker connection', createQueueConnection(env.REDIS_URL), (c) =>
  c.disconnect(),
);
const workers = startWorkers({
  connection: workerConnection,
  prefix: env.QUEUE_PREFIX,
  queues: [...staticQueues, ...usageQueues],
  handlers: {
    ...buildHandlers(deps, metrics, runs),
    ...buildWebhookHandlers(deps),
    ...buildUsageHandlers(deps),
  },
  concurrency: env.WORKER_CONCURRENCY,
  concurrencyByQueue: { sandboxes: env.PROVISION_CONCURRENCY },
  // Postgres or Redis away: the job waits for it without spending an attempt.
  onDependencyWait: (job, err, delayMs) =>
    log.warn(
      {
        job: job.name,
        jobId: job.id,
        delayMs,
        err: err instanceof Error ? err.message : String(err),
      },
      'job waits for an unreachable dependency',
    ),
});
/** instrument records job durations and logs failures of one BullMQ Worker. */
function instrument(w: (typeof workers)[number]) {
  w.on('completed', (job) => {
    if (job.processedOn && job.finishedOn)
      metrics.jobDuration.observe(
        { job: job.name, outcome: 'completed' },
        (job.finishedOn - job.processedOn) / 1000,
      );
  });
  w.on('failed', (job, err) => {
    if (job?.processedOn)
      metrics.jobDuration.observe(
        { job: job.name, outcome: 'failed' },
        (Date.now() - job.processedOn) / 1000,
      );
    log.warn({ queue: w.name, job: job?.name, jobId: job?.id, err: err.message }, 'job failed');
  });
}
for (const w of workers) instrument(w);
// Every sandbox's lane (guest calls, secrets syncs) with two Redis connections; see guest-queues.ts.
const guestSubscriber = owned.own('guest subscriber', createQueueConnection(env.REDIS_URL), (c) =>
  c.disconnect(),
);
const guestQueues = new GuestQueues(deps, {
  connection,
  subscriber: guestSubscriber,
  prefix: env.QUEUE_PREFIX,
  log,
  concurrency: env.GUEST_CONCURRENCY,
  observe: (job, outcome, seconds) => metrics.jobDuration.observe({ job, outcome }, seconds),
});
// Both stop taking jobs at once, then wait for their running ones (BullMQ close waits).
owned.own('job workers', workers, (all) =>
  Promise.all([guestQueues.close(), ...all.map((w) => w.close())]),
);
await guestQueues.start();
metrics.trackPerSandbox(() => guestQueues.stats());
// One schedule in Redis however many workers run; the database decides what is due.
await queues.schedule('claims.reclaim', {}, env.RECLAIM_INTERVAL_MS);
await queues.schedule('pools.sweep', {}, env.SWEEP_INTERVAL_MS);
await queues.schedule('webhooks.relay', {}, env.WEBHOOK_RELAY_INTERVAL_MS);
await queues.schedule('usage.rollup', {}, env.USAGE_ROLLUP_INTERVAL_MS);

const metricsServer =
  env.WORKER_METRICS_PORT === undefined
    ? undefined
    : createServer((req, res) => {
        if (req.url !== '/metrics') return void res.writeHead(404).end();
        void metrics.registry
          .metrics()
          .then((body) =>
            res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(body),
          );
      }).listen(env.WORKER_METRICS_PORT, '127.0.0.1');
if (metricsServer) owned.own('metrics listener', metricsServer, (server) => server.close());
const health =
  env.WORKER_HEALTH_PORT === undefined
    ? undefined
    : startHealthServer({
        host: env.WORKER_HEALTH_HOST,
        port: env.WORKER_HEALTH_PORT,
        checks: { database: () => pingDatabase(db), redis: () => connection.ping() },
        running: () => workers.every((w) => w.isRunning()),
      });
await health?.listening;
log.info({ queues: staticQueues, backends: Object.keys(backends) }, 'worker started');

// The health endpoint is the probe surface: not-ready first, closed after everything else.
closeOnSignals(owned, log, {
  graceMs: 30_000,
  beforeClose: () => health?.markClosing(),
  afterClose: () => health?.close(),
});
