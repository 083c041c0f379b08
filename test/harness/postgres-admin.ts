// Admin SQL for the harness: the template database and per-file copies of it.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const MIGRATIONS_DIR = join(REPO_ROOT, 'packages/db/prisma/migrations');

type Migrate = (options: {
  databaseUrl: string;
  log?: (line: string) => void;
}) => Promise<{ applied: string[] }>;

/** withDatabase returns `url` pointing at database `name` on the same server. */
export function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(name)}`;
  return parsed.toString();
}

/** quoteIdent quotes an SQL identifier. */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** withAdmin runs `fn` with a short-lived connection to `url`. */
export async function withAdmin<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

async function loadMigrate(): Promise<Migrate> {
  const candidates = ['packages/db/dist/migrate/index.js', 'packages/db/src/migrate/index.ts'];
  const found = candidates.map((path) => join(REPO_ROOT, path)).find((path) => existsSync(path));
  if (!found) {
    throw new Error(
      `${MIGRATIONS_DIR} exists but the migration runner does not (looked for ${candidates.join(', ')}); ` +
        'build packages/db (npm test does)',
    );
  }
  const module = (await import(pathToFileURL(found).href)) as { migrate: Migrate };
  return module.migrate;
}

/**
 * createTemplate creates `name` from nothing but the committed migrations, then closes it to
 * connections: CREATE DATABASE ... TEMPLATE fails while anyone is connected to the template.
 */
export async function createTemplate(
  adminUrl: string,
  name: string,
  log: (line: string) => void,
): Promise<string[]> {
  await withAdmin(adminUrl, async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${quoteIdent(name)}`);
  });
  let applied: string[] = [];
  if (existsSync(MIGRATIONS_DIR)) {
    const migrate = await loadMigrate();
    ({ applied } = await migrate({ databaseUrl: withDatabase(adminUrl, name), log }));
  }
  await withAdmin(adminUrl, async (client) => {
    await client.query(`ALTER DATABASE ${quoteIdent(name)} WITH ALLOW_CONNECTIONS false`);
    await client.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [name],
    );
  });
  return applied;
}

/** copyDatabase creates `name` from `template`, retrying while a just-closed session still lingers on it. */
export async function copyDatabase(
  adminUrl: string,
  template: string,
  name: string,
): Promise<void> {
  await withAdmin(adminUrl, async (client) => {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await client.query(`CREATE DATABASE ${quoteIdent(name)} TEMPLATE ${quoteIdent(template)}`);
        return;
      } catch (error) {
        // 55006 object_in_use: "source database is being accessed by other users".
        if ((error as { code?: string }).code !== '55006' || attempt >= 50) throw error;
        await sleep(100);
      }
    }
  });
}

/** dropDatabases drops every database whose name starts with `prefix` (a run's leftovers on a shared server). */
export async function dropDatabases(adminUrl: string, prefix: string): Promise<void> {
  await withAdmin(adminUrl, async (client) => {
    const { rows } = await client.query<{ datname: string }>(
      'SELECT datname FROM pg_database WHERE starts_with(datname, $1)',
      [prefix],
    );
    for (const { datname } of rows) {
      await client.query(`DROP DATABASE IF EXISTS ${quoteIdent(datname)} WITH (FORCE)`);
    }
  });
}
