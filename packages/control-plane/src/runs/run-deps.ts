import type { Db, sqlPoolOf } from '@cubicle/db';
import type { Enqueue } from '../context.js';
import type { RunRedis } from './run-channels.js';

/** RunDeps are what run services need: the database, Redis (events, input) and its prefix. */
export interface RunDeps {
  db: Db;
  queues: Enqueue;
  redis: RunRedis;
  /** The BullMQ prefix; scopes every run channel and key. */
  prefix: string;
}

/** Sql is a node-postgres pool or checked-out client. */
export type Sql = Pick<ReturnType<typeof sqlPoolOf>, 'query'>;
