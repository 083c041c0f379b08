import pg from 'pg';
import { createTestDatabase } from '../../../test/harness/index.js';

/**
 * freshDatabase gives an empty database (no migrations applied) on the harness's server, for
 * tests that exercise the migration runner itself. The harness's per-file database is used only
 * as a door to the server.
 */
export async function freshDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const door = await createTestDatabase();
  const name = `fresh_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: door.url });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  const url = new URL(door.url);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.end();
      await door.drop();
    },
  };
}
