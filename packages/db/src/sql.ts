import type pg from 'pg';
import { sqlPoolOf, type Db } from './client.js';
import type { Prisma } from './generated/prisma/client.js';

/**
 * A raw statement, written once in the repository module of its table family: a stable name
 * (node-postgres prepares a named statement once per connection, so hot statements skip the
 * planner) and its text with `$n` parameters. `Row` is the shape one result row has;
 * `Params` the values in `$n` order, so a caller cannot pass them in the wrong number.
 *
 * This is the one way Cubicle writes raw SQL: no `$queryRaw` templates, no `Prisma.sql`
 * fragments, no inline `pool.query('…')`. The ORM is still used for plain row reads and writes.
 */
export interface Statement<Row, Params extends readonly unknown[] = readonly unknown[]> {
  readonly name: string;
  readonly text: string;
  /** Phantoms: carry the row and parameter types; never set. */
  readonly __row?: Row;
  readonly __params?: Params;
}

/** statement declares a Statement; the name must be unique in the process (suffix _vN on edits). */
export function statement<Row, Params extends readonly unknown[] = readonly unknown[]>(
  name: string,
  text: string,
): Statement<Row, Params> {
  if (!/^cubicle_[a-z0-9_]+$/.test(name)) {
    throw new Error(`statement name ${JSON.stringify(name)} must match cubicle_[a-z0-9_]+`);
  }
  return { name, text };
}

/**
 * Sql runs statements on one target. Which target is the caller's choice: the process pool
 * (`sqlOf(db)`), a checked-out node-postgres client holding a transaction or a lock
 * (`sqlOf(client)`), or a Prisma interactive transaction that also makes ORM calls
 * (`sqlOf(tx)`).
 *
 * Rows from a Prisma transaction are decoded by Prisma (int8 → bigint, numeric → Decimal),
 * rows from node-postgres by pg (int8 → string): a statement's `Row` type must say what its
 * callers' target gives. Cast in SQL (`::int`, `::float8`) when both kinds of target run it.
 */
export interface Sql {
  /** All rows. */
  rows<Row, P extends readonly unknown[]>(st: Statement<Row, P>, ...values: P): Promise<Row[]>;
  /** The first row, or undefined. */
  row<Row, P extends readonly unknown[]>(
    st: Statement<Row, P>,
    ...values: P
  ): Promise<Row | undefined>;
  /** The number of rows the statement changed (or returned). */
  exec<P extends readonly unknown[]>(st: Statement<unknown, P>, ...values: P): Promise<number>;
}

export type SqlTarget = Db | Pick<pg.PoolClient, 'query'> | Prisma.TransactionClient;

const isPrismaTx = (t: SqlTarget): t is Prisma.TransactionClient =>
  typeof (t as { $queryRawUnsafe?: unknown }).$queryRawUnsafe === 'function' &&
  typeof (t as { $connect?: unknown }).$connect !== 'function';

const isDb = (t: SqlTarget): t is Db =>
  typeof (t as { $connect?: unknown }).$connect === 'function';

/** sqlOf answers the Sql that runs statements on `target` (see Sql). */
export function sqlOf(target: SqlTarget): Sql {
  if (isPrismaTx(target)) return prismaSql(target);
  const client: Pick<pg.PoolClient, 'query'> = isDb(target) ? sqlPoolOf(target) : target;
  return pgSql(client);
}

function pgSql(client: Pick<pg.PoolClient, 'query'>): Sql {
  const run = (st: { name: string; text: string }, values: readonly unknown[]) =>
    client.query({ name: st.name, text: st.text, values: [...values] });
  return {
    async rows<Row>(st: { name: string; text: string }, ...values: readonly unknown[]) {
      return (await run(st, values)).rows as Row[];
    },
    async row<Row>(st: { name: string; text: string }, ...values: readonly unknown[]) {
      return (await run(st, values)).rows[0] as Row | undefined;
    },
    async exec(st, ...values) {
      return (await run(st, values)).rowCount ?? 0;
    },
  };
}

function prismaSql(tx: Prisma.TransactionClient): Sql {
  return {
    rows: <Row>(st: { text: string }, ...values: readonly unknown[]) =>
      tx.$queryRawUnsafe<Row[]>(st.text, ...values),
    async row<Row>(st: { text: string }, ...values: readonly unknown[]) {
      const rows = await tx.$queryRawUnsafe<Row[]>(st.text, ...values);
      return rows[0];
    },
    exec: (st, ...values) => tx.$executeRawUnsafe(st.text, ...values),
  };
}
