import { sqlPoolOf, type Db } from '@cubicle/db';

type PgConnect = ReturnType<typeof sqlPoolOf>['connect'];
/**
 * PgClient is a connection checked out of the process pool (sqlOf runs statements on it). Read
 * from connect's callback form: its promise form is an overload ReturnType cannot pick.
 */
export type PgClient = NonNullable<Parameters<Parameters<PgConnect>[0]>[1]>;

/**
 * inPgTransaction runs `work` on one checked-out node-postgres connection between BEGIN and
 * COMMIT, and always gives the connection back. A throw rolls back and rethrows; `rollback()`
 * asks for a rollback instead of the commit and `work`'s value is still returned (a write that
 * found nothing to do, or a transaction held only for an advisory lock).
 *
 * It is for statements that must share a transaction or a lock on the pool's side (a Prisma
 * interactive transaction is the other way: `db.$transaction(tx => …sqlOf(tx)…)`). The
 * transaction control lives here so no service writes BEGIN/COMMIT itself.
 */
export async function inPgTransaction<T>(
  db: Db,
  work: (client: PgClient, rollback: () => void) => Promise<T>,
): Promise<T> {
  const client = await sqlPoolOf(db).connect();
  let commit = true;
  try {
    await client.query('BEGIN');
    const value = await work(client, () => {
      commit = false;
    });
    await client.query(commit ? 'COMMIT' : 'ROLLBACK');
    return value;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
