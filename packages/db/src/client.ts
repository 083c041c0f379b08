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
  return new PrismaClient({ adapter });
}

export type Db = PrismaClient;
