import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { defaultMigrationsDir, readMigrations, type LocalMigration } from './read-migrations.js';

/**
 * The advisory lock key Prisma Migrate itself takes, so our runner and `prisma migrate deploy`
 * never apply migrations to one database at the same time.
 */
const PRISMA_ADVISORY_LOCK = 72707369;

/** The table exactly as Prisma Migrate creates it, so either tool can continue after the other. */
const CREATE_MIGRATIONS_TABLE = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

export class MigrationError extends Error {
  constructor(
    readonly reason:
      'checksum_mismatch' | 'failed_migration' | 'unknown_applied_migration' | 'apply_failed',
    message: string,
  ) {
    super(message);
    this.name = 'MigrationError';
  }
}

export interface MigrateOptions {
  databaseUrl: string;
  migrationsDir?: string;
  log?: (line: string) => void;
}

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

/**
 * checkHistory refuses to go on when the database's history disagrees with the files: an applied
 * migration whose file changed (checksum), a migration that failed half-way, or one the files do
 * not know (the database is ahead of this code). It runs before anything is applied.
 */
function checkHistory(local: LocalMigration[], applied: AppliedRow[]): void {
  const byName = new Map(local.map((m) => [m.name, m]));
  for (const row of applied) {
    if (row.rolled_back_at) continue;
    if (!row.finished_at) {
      throw new MigrationError(
        'failed_migration',
        `migration ${row.migration_name} started but never finished; resolve it before migrating`,
      );
    }
    const file = byName.get(row.migration_name);
    if (!file) {
      throw new MigrationError(
        'unknown_applied_migration',
        `migration ${row.migration_name} is applied to the database but missing from ${'the migrations folder'}`,
      );
    }
    if (file.checksum !== row.checksum) {
      throw new MigrationError(
        'checksum_mismatch',
        `migration ${row.migration_name} was modified after it was applied (checksum ${row.checksum.slice(0, 12)}… in the database, ${file.checksum.slice(0, 12)}… on disk); add a new migration instead`,
      );
    }
  }
}

/**
 * migrate applies the committed SQL migrations that the database has not seen, each in its own
 * transaction together with its `_prisma_migrations` row, under Prisma's advisory lock. It is
 * idempotent; on any disagreement (see checkHistory) it changes nothing and throws MigrationError.
 */
export async function migrate(options: MigrateOptions): Promise<{ applied: string[] }> {
  const log = options.log ?? (() => {});
  const local = readMigrations(options.migrationsDir ?? defaultMigrationsDir);
  const client = new pg.Client({ connectionString: options.databaseUrl });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [PRISMA_ADVISORY_LOCK]);
    await client.query(CREATE_MIGRATIONS_TABLE);
    const { rows } = await client.query<AppliedRow>(
      'SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at',
    );
    checkHistory(local, rows);
    const done = new Set(
      rows.filter((r) => r.finished_at && !r.rolled_back_at).map((r) => r.migration_name),
    );
    const pending = local.filter((m) => !done.has(m.name));
    const applied: string[] = [];
    for (const migration of pending) {
      log(`applying ${migration.name}`);
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
           VALUES ($1, $2, $3, now(), now(), 1)`,
          [randomUUID(), migration.checksum, migration.name],
        );
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw new MigrationError(
          'apply_failed',
          `migration ${migration.name} failed and was rolled back: ${(err as Error).message}`,
        );
      }
      applied.push(migration.name);
    }
    log(applied.length === 0 ? 'database is up to date' : `applied ${applied.length} migration(s)`);
    return { applied };
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [PRISMA_ADVISORY_LOCK]).catch(() => {});
    await client.end();
  }
}
