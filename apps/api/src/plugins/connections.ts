import { createDb, type Db } from '@cubicle/db';
import type { Enqueue } from '@cubicle/control-plane';
import { createQueueConnection, JobQueues } from '@cubicle/queue';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { createRedis } from '../lib/redis.js';
import { own } from './own.js';

/** The clients every API route group needs. */
export interface Connections {
  db: Db;
  /** Shared state across replicas: rate limits, viewer stream leases, pub/sub. */
  redis: Redis;
  /** Where pool, claim and run routes enqueue worker jobs. */
  queues: Enqueue;
}

/**
 * ApiConnections are given as URLs, which the app opens and closes (the process), or as clients
 * the caller opened and closes after `app.close()` (tests running several apps on one database).
 * Either way every connection is there: no route group is left out for want of one.
 */
export type ApiConnections =
  { databaseUrl: string; redisUrl: string; databaseMaxConnections?: number } | Connections;

/** Why a process cannot start: named, so the operator knows which setting to fix. */
export class MissingDependencyError extends Error {
  constructor(what: string) {
    super(`cubicle-api cannot start without ${what}`);
    this.name = 'MissingDependencyError';
  }
}

/**
 * registerConnections opens Postgres, Redis and the job queues (in that order, so they close in
 * the reverse one: queues, Redis, Postgres) when given URLs; given clients are passed through and
 * left open for their owner.
 */
export async function registerConnections(
  app: FastifyInstance,
  given: ApiConnections,
  queuePrefix: string,
): Promise<Connections> {
  if (!('databaseUrl' in given)) {
    for (const name of ['db', 'redis', 'queues'] as const)
      if (!given[name]) throw new MissingDependencyError(name);
    return given;
  }
  if (!given.databaseUrl) throw new MissingDependencyError('a database URL (DATABASE_URL)');
  if (!given.redisUrl) throw new MissingDependencyError('a Redis URL (REDIS_URL)');
  const db = createDb({
    databaseUrl: given.databaseUrl,
    ...(given.databaseMaxConnections ? { maxConnections: given.databaseMaxConnections } : {}),
  });
  own(app, 'postgres', () => db.$disconnect());
  // One failed command fails its request at once instead of queueing behind a reconnect.
  const redis = createRedis(given.redisUrl, { maxRetriesPerRequest: 1 });
  own(app, 'redis', () => redis.disconnect());
  await redis.connect();
  const queueConnection = createQueueConnection(given.redisUrl);
  const queues = new JobQueues(queueConnection, queuePrefix);
  own(app, 'queues', async () => {
    await queues.close();
    queueConnection.disconnect();
  });
  return { db, redis, queues };
}
