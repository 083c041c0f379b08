import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from './generated/prisma/client.js';

export interface DbOptions {
  databaseUrl: string;
  /** Pool size per process; the API and worker each hold one pool. */
  maxConnections?: number;
}

/** createDb builds a Prisma client on node-postgres (driver adapter: no native engine needed). */
export function createDb(options: DbOptions): PrismaClient {
  const adapter = new PrismaPg({
    connectionString: options.databaseUrl,
    max: options.maxConnections ?? 10,
  });
  // Interactive transactions wait for a pooled connection under bursts (e.g. 200 simultaneous
  // claims on a pool of 10-20 connections); Prisma's 2 s default fails them instead of queueing.
  return new PrismaClient({ adapter, transactionOptions: { maxWait: 15_000, timeout: 30_000 } });
}

export type Db = PrismaClient;
