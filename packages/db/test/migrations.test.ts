import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  defaultMigrationsDir,
  migrate,
  MigrationError,
  readMigrations,
} from '../src/migrate/index.js';
import { freshDatabase } from './fresh-database.js';

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

describe('migration runner', () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let dir: string;

  beforeAll(async () => {
    db = await freshDatabase();
    dir = mkdtempSync(join(tmpdir(), 'cubicle-migrations-'));
    cpSync(defaultMigrationsDir, dir, { recursive: true });
  });
  afterAll(async () => {
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('builds the schema from the committed SQL and records Prisma-compatible rows', async () => {
    const local = readMigrations(dir);
    const first = await migrate({ databaseUrl: db.url, migrationsDir: dir });
    expect(first.applied).toEqual(local.map((m) => m.name));
    const rows = await query<{
      migration_name: string;
      checksum: string;
      finished_at: Date | null;
      applied_steps_count: number;
    }>(
      db.url,
      'SELECT migration_name, checksum, finished_at, applied_steps_count FROM _prisma_migrations ORDER BY migration_name',
    );
    expect(rows.map((r) => [r.migration_name, r.checksum, r.applied_steps_count])).toEqual(
      local.map((m) => [m.name, m.checksum, 1]),
    );
    expect(rows.every((r) => r.finished_at instanceof Date)).toBe(true);
  });

  it('is idempotent', async () => {
    expect((await migrate({ databaseUrl: db.url, migrationsDir: dir })).applied).toEqual([]);
  });

  it('refuses a modified already-applied migration and changes nothing', async () => {
    const first = readMigrations(dir)[0]!;
    const file = join(dir, first.name, 'migration.sql');
    const original = readFileSync(file, 'utf8');
    writeFileSync(file, original + '\nCREATE TABLE "sneaky" (id int);\n');
    // A new pending migration too: it must not be applied when history disagrees.
    const pendingDir = join(dir, '29991231000000_later');
    cpSync(join(dir, first.name), pendingDir, { recursive: true });
    writeFileSync(join(pendingDir, 'migration.sql'), 'CREATE TABLE "later" (id int);\n');
    const before = await query(db.url, 'SELECT count(*)::int AS n FROM _prisma_migrations');

    const err = await migrate({ databaseUrl: db.url, migrationsDir: dir }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MigrationError);
    expect((err as MigrationError).reason).toBe('checksum_mismatch');
    expect((err as MigrationError).message).toContain(first.name);

    const tables = await query<{ tablename: string }>(
      db.url,
      "SELECT tablename FROM pg_tables WHERE tablename IN ('sneaky','later')",
    );
    expect(tables).toEqual([]);
    expect(await query(db.url, 'SELECT count(*)::int AS n FROM _prisma_migrations')).toEqual(
      before,
    );

    writeFileSync(file, original);
    rmSync(pendingDir, { recursive: true });
  });

  it('rolls back a failing migration completely and records nothing', async () => {
    const badDir = join(dir, '29991231000001_broken');
    cpSync(join(dir, readMigrations(dir)[0]!.name), badDir, { recursive: true });
    writeFileSync(
      join(badDir, 'migration.sql'),
      'CREATE TABLE "half" (id int);\nSELECT * FROM "no_such_table";\n',
    );
    const err = await migrate({ databaseUrl: db.url, migrationsDir: dir }).catch((e: unknown) => e);
    expect((err as MigrationError).reason).toBe('apply_failed');
    expect(await query(db.url, "SELECT tablename FROM pg_tables WHERE tablename = 'half'")).toEqual(
      [],
    );
    expect(
      await query(db.url, "SELECT 1 FROM _prisma_migrations WHERE migration_name LIKE '%broken'"),
    ).toEqual([]);
    rmSync(badDir, { recursive: true });
  });

  it('refuses when the database has a migration the files do not know', async () => {
    const other = mkdtempSync(join(tmpdir(), 'cubicle-migrations-empty-'));
    try {
      const err = await migrate({ databaseUrl: db.url, migrationsDir: other }).catch(
        (e: unknown) => e,
      );
      expect((err as MigrationError).reason).toBe('unknown_applied_migration');
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('serialises concurrent runners (advisory lock): each migration applied once', async () => {
    const fresh = await freshDatabase();
    try {
      const results = await Promise.all(
        Array.from({ length: 4 }, () => migrate({ databaseUrl: fresh.url, migrationsDir: dir })),
      );
      expect(results.flatMap((r) => r.applied)).toEqual(readMigrations(dir).map((m) => m.name));
    } finally {
      await fresh.drop();
    }
  });
});
