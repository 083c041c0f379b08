import { createDb, type Db } from '@cubicle/db';
import { createTestDatabase } from '../../../test/harness/index.js';

/** databaseFixture gives a test file its own migrated database and a client on it. */
export async function databaseFixture(): Promise<{ db: Db; close(): Promise<void> }> {
  const handle = await createTestDatabase();
  const db = createDb({ databaseUrl: handle.url, maxConnections: 6 });
  return {
    db,
    async close() {
      await db.$disconnect();
      await handle.drop();
    },
  };
}
