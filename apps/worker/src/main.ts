#!/usr/bin/env node
import { createDb } from '@cubicle/db';
import { createQueueConnection, startWorkers } from '@cubicle/queue';
import { pino } from 'pino';
import { loadWorkerEnv } from './env.js';
import { buildHandlers, staticQueues } from './handlers.js';

// Parse configuration before anything starts: a bad variable stops the process here.
const env = loadWorkerEnv();
const log = pino({ level: env.LOG_LEVEL, base: { service: 'cubicle-worker' } });

const db = createDb({ databaseUrl: env.DATABASE_URL });
await db.$queryRaw`SELECT 1`;
const connection = createQueueConnection(env.REDIS_URL);
const workers = startWorkers({
  connection,
  prefix: env.QUEUE_PREFIX,
  queues: staticQueues,
  handlers: buildHandlers({ db }),
  concurrency: env.WORKER_CONCURRENCY,
});
for (const w of workers) {
  w.on('failed', (job, err) =>
    log.warn({ queue: w.name, job: job?.name, jobId: job?.id, err: err.message }, 'job failed'),
  );
}
log.info({ queues: staticQueues }, 'worker started');

let closing = false;
/** shutdown lets running jobs finish (BullMQ close waits), then closes Redis and Prisma. */
async function shutdown(signal: string) {
  if (closing) return;
  closing = true;
  log.info({ signal }, 'shutting down');
  const force = setTimeout(() => process.exit(1), 30_000);
  force.unref();
  await Promise.all(workers.map((w) => w.close()));
  connection.disconnect();
  await db.$disconnect();
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
