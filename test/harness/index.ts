// What test files use: an isolated database and Redis namespace per test file, on the services
// the global setup started (see vitest.config.ts). Call them in beforeAll, clean up in afterAll.
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { databasePrefix, redisPrefix, type HarnessContext } from './context.js';
import type { S3Endpoint } from './s3-server.js';
import { copyDatabase, quoteIdent, withAdmin, withDatabase } from './postgres-admin.js';
import { deleteKeysWithPrefix } from './redis-keys.js';

export { redisOptionsFromUrl, type RedisConnectionOptions } from '@cubicle/config';
export type { HarnessContext } from './context.js';
export type { S3Endpoint } from './s3-server.js';

export interface TestDatabase {
  /** Connection URL of this file's database (a copy of the migrated template). */
  url: string;
  name: string;
  /** Drops the database, disconnecting whoever is still connected; idempotent. */
  drop(): Promise<void>;
}

export interface TestRedisNamespace {
  /** The shared Redis server. */
  url: string;
  /** Unique key prefix ending in ':' (ioredis `keyPrefix`, raw keys). */
  prefix: string;
  /** The same without the trailing ':' for BullMQ's `prefix` option (BullMQ adds the ':'). */
  bullPrefix: string;
  /** Deletes every key under `prefix` (SCAN + UNLINK). */
  cleanup(): Promise<void>;
}

function harness(): HarnessContext {
  const context = inject('cubicle');
  if (!context) {
    throw new Error(
      'no test harness context: createTestDatabase/createTestRedisNamespace work in the integration ' +
        'and e2e projects, whose globalSetup starts the services (see vitest.config.ts)',
    );
  }
  return context;
}

const uniqueSuffix = () => randomBytes(5).toString('hex');

/** createTestDatabase creates a fresh database for the calling test file from the migrated template. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const { runId, postgres } = harness();
  const name = `${databasePrefix(runId)}${uniqueSuffix()}`;
  await copyDatabase(postgres.adminUrl, postgres.templateDatabase, name);
  return {
    url: withDatabase(postgres.adminUrl, name),
    name,
    drop: () =>
      withAdmin(postgres.adminUrl, async (client) => {
        await client.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`);
      }),
  };
}

/** createTestRedisNamespace reserves a key prefix no other test file uses. */
export function createTestRedisNamespace(): TestRedisNamespace {
  const { runId, redis } = harness();
  const bullPrefix = `${redisPrefix(runId)}${uniqueSuffix()}`;
  const prefix = `${bullPrefix}:`;
  return {
    url: redis.url,
    prefix,
    bullPrefix,
    cleanup: async () => {
      await deleteKeysWithPrefix(redis.url, prefix);
    },
  };
}

/**
 * harnessS3 is the run's S3-compatible server (versitygw on loopback, a private data dir), or
 * throws saying how to build it: the S3 suites never skip.
 */
export function harnessS3(): S3Endpoint {
  const { s3 } = harness();
  if ('missing' in s3) throw new Error(s3.missing);
  return s3;
}
