import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from './generated/prisma/client.js';

export interface DbOptions {
  databaseUrl: string;
  /** Pool size per process; the API and worker each hold one pool. */
  maxConnections?: number;
}

export type Db = PrismaClient;

// The node-postgres pool under each client: raw statements (sql.ts) run on it.
const pools = new WeakMap<object, pg.Pool>();

/**
 * createDb builds a Prisma client on node-postgres (driver adapter: no native engine needed).
 * The client and sqlPoolOf(db) share one connection pool, so the process's connection budget
 * is the same whichever way a query goes.
 */
export function createDb(options: DbOptions): Db {
  const max = options.maxConnections ?? 10;
  const pool = new pg.Pool({
    connectionString: options.databaseUrl,
    max,
    // Connections once opened stay open (pg-pool closes idle ones above `min` after 10 s): a new
    // one costs a Postgres backend fork and authentication, and a burst of claims after a quiet
    // minute would pay that on its critical path.
    min: max,
  });
  // An idle client that loses its connection emits 'error' on the pool; unhandled, that would
  // kill the process. The next query opens a new connection.
  pool.on('error', () => undefined);
  const adapter = new PrismaPg(pool, { disposeExternalPool: true });
  // Interactive transactions wait for a pooled connection under bursts (e.g. 200 simultaneous
  // claims on a pool of 10-20 connections); Prisma's 2 s default fails them instead of queueing.
  const db = new PrismaClient({
    adapter,
    transactionOptions: { maxWait: 15_000, timeout: 30_000 },
  });
  pools.set(db, pool);
  return db;
}

/**
 * sqlPoolOf is the node-postgres pool of a client made by createDb. Raw SQL is written as
 * Statements in a repository module (a package's `src/repositories/`; control-plane's
 * raw-sql-places.test.ts fails on raw SQL anywhere else) and run through sqlOf (sql.ts), which
 * uses this pool; take the pool itself only to check out a client for a transaction or a lock
 * (`sqlOf(client)` then runs on it). The ORM stays for plain reads and writes of rows.
 */
export function sqlPoolOf(db: Db): pg.Pool {
  const pool = pools.get(db);
  if (!pool) throw new Error('sqlPoolOf: this client was not made by createDb');
  return pool;
}
