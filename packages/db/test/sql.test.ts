import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../test/harness/index.js';
import { createDb, sqlOf, sqlPoolOf, statement, type Db } from '../src/index.js';

// One statement runs the same on each target sqlOf accepts: the pool, a checked-out client
// inside a transaction, and a Prisma interactive transaction (rolled back with it).
const addOne = statement<{ n: number }, [number]>('cubicle_test_add_one_v1', 'SELECT $1::int + 1 AS n');
const insertTenant = statement<never, [string, string]>(
  'cubicle_test_insert_tenant_v1',
  `INSERT INTO tenants (id, name, created_at, updated_at) VALUES ($1, $2, now(), now())`,
);
const countTenants = statement<{ n: number }, [string]>(
  'cubicle_test_count_tenants_v1',
  'SELECT count(*)::int AS n FROM tenants WHERE name = $1',
);

describe('sqlOf', () => {
  let handle: Awaited<ReturnType<typeof createTestDatabase>>;
  let db: Db;
  beforeAll(async () => {
    handle = await createTestDatabase();
    db = createDb({ databaseUrl: handle.url, maxConnections: 2 });
  });
  afterAll(async () => {
    await db?.$disconnect();
    await handle?.drop();
  });

  it('runs a statement on the pool, a client and a Prisma transaction', async () => {
    expect(await sqlOf(db).row(addOne, 41)).toEqual({ n: 42 });
    const client = await sqlPoolOf(db).connect();
    try {
      expect(await sqlOf(client).rows(addOne, 1)).toEqual([{ n: 2 }]);
    } finally {
      client.release();
    }
    const inTx = await db.$transaction((tx) => sqlOf(tx).row(addOne, 6));
    expect(inTx).toEqual({ n: 7 });
  });

  it('exec counts changed rows; a Prisma transaction that throws leaves nothing', async () => {
    expect(await sqlOf(db).exec(insertTenant, 'tenant_sqltest_1', 'sql-test')).toBe(1);
    await expect(
      db.$transaction(async (tx) => {
        await sqlOf(tx).exec(insertTenant, 'tenant_sqltest_2', 'sql-test');
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await sqlOf(db).row(countTenants, 'sql-test')).toEqual({ n: 1 });
  });

  it('refuses a statement name that is not cubicle_…', () => {
    expect(() => statement('get_run', 'SELECT 1')).toThrow(/cubicle_/);
  });
});
