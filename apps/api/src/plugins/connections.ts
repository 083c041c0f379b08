import { createDb, type Db } from '@cubicle/db';
import {
  createResources,
  type EgressInstallation,
  type Enqueue,
  type Keyring,
  type ObjectStore,
  type Resources,
} from '@cubicle/control-plane';
import { createQueueConnection, JobQueues } from '@cubicle/queue';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Redis } from 'ioredis';
import { createRedis } from '../lib/redis.js';
import { own } from './own.js';
import { Plugin } from './plugin-names.js';

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

/** AppConnections are the connections plus the BullMQ prefix that scopes queues and channels. */
export interface AppConnections extends Connections {
  prefix: string;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Set by the connections plugin: every other plugin reads its clients from here. */
    connections: AppConnections;
    /**
     * The control plane's resources over these connections, made once per app: what every
     * service takes, and the owner of its group commits (two apps in one process share none).
     */
    resources: Resources;
  }
}

/**
 * openConnections opens Postgres, Redis and the job queues (in that order, so they close in
 * the reverse one: queues, Redis, Postgres) when given URLs; given clients are passed through and
 * left open for their owner.
 */
async function openConnections(
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

export interface ConnectionsOptions {
  given: ApiConnections;
  queuePrefix: string;
  /** Seals secret values and webhook signing secrets at rest (CUBICLE_KEYRING). */
  keyring: Keyring;
  /** The operator's opt-out of the webhook address guard (CUBICLE_WEBHOOKS_ALLOW_PRIVATE). */
  allowPrivateWebhooks: boolean;
  /** The operator's egress settings (CUBICLE_EGRESS_*); undefined: closed. */
  egress?: EgressInstallation | undefined;
  /** The object store (CUBICLE_OBJECT_STORE); undefined: none. */
  objectStore?: ObjectStore | undefined;
}

/**
 * connectionsPlugin opens (or takes) Postgres, Redis and the job queues and decorates the app with
 * them as `app.connections`, and with the control plane's resources over them as
 * `app.resources` (claim ends and revoked tickets are announced on this Redis, so every replica
 * closes its streams). It is registered first: what it opened closes last.
 */
export const connectionsPlugin = fp<ConnectionsOptions>(
  async (app, { given, queuePrefix, keyring, allowPrivateWebhooks, egress, objectStore }) => {
    const connections = await openConnections(app, given, queuePrefix);
    app.decorate('connections', { ...connections, prefix: queuePrefix });
    const { db, redis, queues } = connections;
    app.decorate(
      'resources',
      createResources({
        db,
        queues,
        redis,
        prefix: queuePrefix,
        keyring,
        webhooks: { allowPrivate: allowPrivateWebhooks },
        egress,
        objectStore,
      }),
    );
  },
  { name: Plugin.connections },
);
