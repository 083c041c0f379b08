import { sqlOf, statement, type Prisma } from '@cubicle/db';
import type { PgClient } from './pg-transaction.js';

const advisoryXactLock = statement<never, [key: string]>(
  'cubicle_advisory_xact_lock_v1',
  'SELECT pg_advisory_xact_lock(hashtext($1))',
);

/**
 * lockForTransaction takes the transaction-scoped advisory lock named `key` (e.g.
 * `pool:<tenant>:<name>`), waiting for whoever holds it; it is released when `tx` ends. It
 * serialises work on one thing across processes without a row to lock.
 */
export async function lockForTransaction(
  tx: Prisma.TransactionClient | Pick<PgClient, 'query'>,
  key: string,
): Promise<void> {
  await sqlOf(tx).exec(advisoryXactLock, key);
}
