// The built @cubicle/embedded and @cubicle/db, loaded after `npm ci` and the build, and the
// two things every command does with them: make sure a database exists and migrate it.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { UserError } from './ui.mjs';

async function importBuilt(root, relative, what) {
  const file = join(root, relative);
  if (!existsSync(file)) {
    throw new UserError(`${relative} is missing: ${what} was not built (see the build step above)`);
  }
  return import(pathToFileURL(file).href);
}

/** loadEmbedded imports the built @cubicle/embedded. */
export function loadEmbedded(root) {
  return importBuilt(root, 'packages/embedded/dist/index.js', '@cubicle/embedded');
}

/** databaseName is the database a postgres URL points at. */
export function databaseName(url) {
  return decodeURIComponent(new URL(url).pathname.slice(1));
}

/** withDatabase returns `url` pointing at another database on the same server. */
export function withDatabase(url, name) {
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(name)}`;
  return parsed.toString();
}

/** ensureDatabase creates the database `url` points at when the server does not have it yet. */
export async function ensureDatabase(root, url, log) {
  const pg = createRequire(join(root, 'package.json'))('pg');
  const name = databaseName(url);
  const client = new pg.Client({ connectionString: withDatabase(url, 'postgres') });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      await client.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`);
      log(`created database ${name}`);
    }
  } finally {
    await client.end();
  }
}

/** migrateDatabase applies the committed migrations with packages/db's offline runner. */
export async function migrateDatabase(root, url, log) {
  const { migrate } = await importBuilt(root, 'packages/db/dist/migrate/index.js', '@cubicle/db');
  const { applied } = await migrate({ databaseUrl: url, log });
  log(
    applied.length === 0 ? 'migrations: up to date' : `migrations applied: ${applied.join(', ')}`,
  );
  return applied;
}
