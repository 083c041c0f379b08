// The harness gives every test file its own database (a copy of the migrated template) and its
// own Redis namespace. harness-parallel.test.ts runs alongside this file and uses the same table
// and key names with different contents.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  createTestDatabase,
  createTestRedisNamespace,
  redisOptionsFromUrl,
  type TestDatabase,
  type TestRedisNamespace,
} from '../harness/index.js';

const MIGRATIONS_DIR = fileURLToPath(
  new URL('../../packages/db/prisma/migrations', import.meta.url),
);
const hasMigrations = existsSync(MIGRATIONS_DIR);

async function sql<T extends pg.QueryResultRow>(url: string, text: string, values?: unknown[]) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

const tablesOf = async (url: string) =>
  (
    await sql<{ table_name: string }>(
      url,
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
    )
  ).map((row) => row.table_name);

describe('the first database of this file', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  it('is a database of its own, reachable with pg', async () => {
    const [row] = await sql<{ name: string }>(db.url, 'SELECT current_database() AS name');
    expect(row?.name).toBe(db.name);
  });

  it('keeps what this describe block writes', async () => {
    await sql(db.url, 'CREATE TABLE only_in_first (id int)');
    await sql(db.url, "CREATE TABLE widgets (label text); INSERT INTO widgets VALUES ('harness')");
    expect(await tablesOf(db.url)).toEqual(expect.arrayContaining(['only_in_first', 'widgets']));
  });
});

describe('a second database of this file', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  it("sees none of the first database's tables", async () => {
    const tables = await tablesOf(db.url);
    expect(tables).not.toContain('only_in_first');
    expect(tables).not.toContain('widgets');
  });

  it('starts from the migrated template', async () => {
    const tables = await tablesOf(db.url);
    if (!hasMigrations) {
      expect(tables).toEqual([]);
      return;
    }
    expect(tables).toContain('_prisma_migrations');
    const committed = readdirSync(MIGRATIONS_DIR)
      .filter((entry) => statSync(join(MIGRATIONS_DIR, entry)).isDirectory())
      .sort();
    const recorded = await sql<{ migration_name: string }>(
      db.url,
      'SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL ORDER BY migration_name',
    );
    expect(recorded.map((row) => row.migration_name)).toEqual(committed);
    expect(inject('cubicle').postgres.migrations).toEqual(committed);
  });

  it('drop() removes the database and may be called twice', async () => {
    const extra = await createTestDatabase();
    await extra.drop();
    await extra.drop();
    const rows = await sql(db.url, 'SELECT 1 FROM pg_database WHERE datname = $1', [extra.name]);
    expect(rows).toHaveLength(0);
  });
});

describe('redis namespaces', () => {
  let first: TestRedisNamespace;
  let second: TestRedisNamespace;
  let raw: Redis;
  const scoped = (ns: TestRedisNamespace) =>
    new Redis({ ...redisOptionsFromUrl(ns.url), keyPrefix: ns.prefix, lazyConnect: true });

  beforeAll(async () => {
    first = createTestRedisNamespace();
    second = createTestRedisNamespace();
    raw = new Redis({ ...redisOptionsFromUrl(first.url), lazyConnect: true });
    await raw.connect();
  });
  afterAll(async () => {
    await first.cleanup();
    await second.cleanup();
    raw.disconnect();
  });

  const keysUnder = async (prefix: string) => (await raw.keys(`${prefix}*`)).sort();

  it('have distinct prefixes and see only their own keys', async () => {
    expect(first.prefix).not.toBe(second.prefix);
    const a = scoped(first);
    const b = scoped(second);
    await a.set('widgets', 'harness');
    await a.set('jobs:1', 'x');
    await b.set('widgets', 'other');
    expect(await a.get('widgets')).toBe('harness');
    expect(await b.get('widgets')).toBe('other');
    expect(await keysUnder(first.prefix)).toEqual([
      `${first.prefix}jobs:1`,
      `${first.prefix}widgets`,
    ]);
    expect(await keysUnder(second.prefix)).toEqual([`${second.prefix}widgets`]);
    a.disconnect();
    b.disconnect();
  });

  it("cleanup() deletes its own keys and leaves the other namespace's", async () => {
    await first.cleanup();
    expect(await keysUnder(first.prefix)).toEqual([]);
    expect(await keysUnder(second.prefix)).toEqual([`${second.prefix}widgets`]);
  });
});
