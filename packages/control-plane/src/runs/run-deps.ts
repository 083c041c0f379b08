import type { Db, sqlPoolOf } from '@cubicle/db';
import type { Clock, Enqueue } from '../context.js';
import type { Keyring } from '../crypto/keyring.js';
import type { RunRedis } from './run-channels.js';

/** RunDeps are what run services need: the database, Redis (events, input) and its prefix. */
export interface RunDeps extends Clock {
  db: Db;
  queues: Enqueue;
  redis: RunRedis;
  /** The BullMQ prefix; scopes every run channel and key. */
  prefix: string;
  /** The API's keyring: idempotency hashes of run requests are keyed from it. */
  keyring?: Keyring | undefined;
}

/** Sql is a node-postgres pool or checked-out client. */
export type Sql = Pick<ReturnType<typeof sqlPoolOf>, 'query'>;
