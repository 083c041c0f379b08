// Runs in another worker, concurrently with harness.test.ts, using the same table and key names:
// each file must see only what it wrote itself.
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createTestDatabase,
  createTestRedisNamespace,
  redisOptionsFromUrl,
  type TestDatabase,
  type TestRedisNamespace,
} from '../harness/index.js';

let db: TestDatabase;
let ns: TestRedisNamespace;

beforeAll(async () => {
  db = await createTestDatabase();
  ns = createTestRedisNamespace();
});
afterAll(async () => {
  await db.drop();
  await ns.cleanup();
});

it('has a widgets table holding only its own rows', async () => {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    await client.query(
      "CREATE TABLE widgets (label text); INSERT INTO widgets VALUES ('parallel')",
    );
    // Give harness.test.ts time to write its own widgets table elsewhere.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const { rows } = await client.query<{ label: string }>('SELECT label FROM widgets');
    expect(rows).toEqual([{ label: 'parallel' }]);
  } finally {
    await client.end();
  }
});

it('reads back only its own value under a shared key name', async () => {
  const redis = new Redis({ ...redisOptionsFromUrl(ns.url), keyPrefix: ns.prefix });
  try {
    await redis.set('widgets', 'parallel');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await redis.get('widgets')).toBe('parallel');
  } finally {
    redis.disconnect();
  }
});
