import type { Db, sqlPoolOf } from '@cubicle/db';

/**
 * PoolTarget is where a statement whose rows node-postgres decodes runs (int8 as a string,
 * bytea as a Buffer): the process pool behind `db`, or a client checked out of it by a caller
 * holding a transaction or a lock. A Prisma transaction is not one (it decodes rows its own way),
 * so a function taking a PoolTarget cannot be handed one by mistake.
 */
export type PoolTarget = Db | Pick<ReturnType<typeof sqlPoolOf>, 'query'>;
