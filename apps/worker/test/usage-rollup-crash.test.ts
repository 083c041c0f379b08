import { randomBytes } from 'node:crypto';
import { createDb, newId, type Db } from '@cubicle/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker, type WorkerProcess } from '../../../test/e2e/support/worker-process.js';
import {
  createTestDatabase,
  createTestRedisNamespace,
  type TestDatabase,
  type TestRedisNamespace,
} from '../../../test/harness/index.js';

const CLAIMS = 60_000;

/**
 * A real worker process (the built apps/worker) is SIGKILLed while its usage rollup transaction
 * is running; a restarted worker must arrive at exactly the totals the facts imply — nothing
 * half-written, nothing counted twice.
 */
describe('usage rollup survives kill -9 of the worker', () => {
  let database: TestDatabase;
  let ns: TestRedisNamespace;
  let db: Db;
  let worker: WorkerProcess | undefined;
  let tenantId: string;
  const env = () => ({
    DATABASE_URL: database.url,
    REDIS_URL: ns.url,
    QUEUE_PREFIX: ns.bullPrefix,
    CUBICLE_KEYRING: `k1:${randomBytes(32).toString('base64')}`,
    CUBICLE_BACKENDS: 'local',
    USAGE_ROLLUP_INTERVAL_MS: '1000',
  });

  beforeAll(async () => {
    database = await createTestDatabase();
    ns = createTestRedisNamespace();
    db = createDb({ databaseUrl: database.url, maxConnections: 4 });
    tenantId = newId('tenant');
    await db.tenant.create({ data: { id: tenantId, name: 'metered' } });
    const poolId = newId('pool');
    await db.pool.create({
      data: {
        id: poolId,
        tenantId,
        name: 'p',
        image: 'img',
        backend: 'local',
        cpuMillis: 1000,
        memoryMb: 1024,
        minSize: 0,
        initialSize: 0,
        maxSize: 1,
        claimTtlSeconds: 600,
        maxClaimLifetimeSeconds: 86_400,
      },
    });
    // Released claims spread over the last 20 days, 1–120 minutes each and all ended by now:
    // enough facts that the rollup runs long enough to be caught in the middle.
    await db.$executeRawUnsafe(
      `INSERT INTO claims (id, tenant_id, pool_id, name, status, ttl_seconds, expires_at,
                           max_expires_at, last_heartbeat_at, released_at, release_reason,
                           activated_at, created_at, updated_at)
       SELECT 'clm_crash' || lpad(i::text, 17, '0'), $1, $2, 'c' || i, 'released', 600, e, e, s, e,
              'released_by_client', s, s, e
       FROM (SELECT i, now() - make_interval(mins => 150 + (i * 7919) % 28800) AS s,
                    now() - make_interval(mins => 150 + (i * 7919) % 28800)
                          + make_interval(mins => 1 + (i * 31) % 120) AS e
             FROM generate_series(1, $3) i) x`,
      tenantId,
      poolId,
      CLAIMS,
    );
  });
  afterAll(async () => {
    await worker?.kill9();
    await db?.$disconnect();
    await ns?.cleanup();
    await database?.drop();
  });

  /** The rollup's statement is visible in pg_stat_activity while it runs. */
  async function rollupRunning(): Promise<boolean> {
    const rows = await db.$queryRawUnsafe<{ n: bigint }[]>(
      `SELECT count(*) AS n FROM pg_stat_activity
       WHERE datname = current_database() AND state = 'active'
         AND query LIKE '%usage_targets%' AND query NOT LIKE '%pg_stat_activity%'`,
    );
    return rows[0]!.n > 0n;
  }

  async function totals() {
    const [row] = await db.$queryRawUnsafe<{ claims: number; seconds: number }[]>(
      `SELECT COALESCE(sum(claims), 0)::int AS claims, COALESCE(sum(claim_seconds), 0)::float8 AS seconds
       FROM usage_hourly WHERE tenant_id = $1`,
      tenantId,
    );
    return row!;
  }

  it('killed mid-rollup: nothing committed; restarted: the exact totals of the facts', async () => {
    worker = startWorker(env());
    let caught = false;
    const deadline = Date.now() + 45_000;
    while (Date.now() < deadline) {
      if (await rollupRunning()) {
        await worker.kill9();
        caught = true;
        break;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(caught, worker.output()).toBe(true);
    // The killed transaction is rolled back by Postgres once the connection is gone.
    for (let i = 0; i < 200 && (await rollupRunning()); i++)
      await new Promise((r) => setTimeout(r, 50));
    const state = await db.usageRollupState.findUniqueOrThrow({ where: { id: 'usage' } });
    expect(state.rolledTo).toBeNull();
    expect(await totals()).toEqual({ claims: 0, seconds: 0 });

    worker = startWorker(env());
    // Two completed rollups: the second recomputes the latest hours again, changing nothing.
    let rolled = 0;
    let first: Date | null = null;
    while (Date.now() < deadline + 60_000) {
      const s = await db.usageRollupState.findUniqueOrThrow({ where: { id: 'usage' } });
      if (s.rolledTo && (!first || s.rolledTo > first)) {
        first = s.rolledTo;
        if (++rolled === 2) break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(rolled, worker.output()).toBe(2);
    const [facts] = await db.$queryRawUnsafe<{ claims: number; seconds: number }[]>(
      `SELECT count(*)::int AS claims,
              sum(EXTRACT(EPOCH FROM released_at - activated_at))::float8 AS seconds
       FROM claims WHERE tenant_id = $1`,
      tenantId,
    );
    const got = await totals();
    expect(got.claims).toBe(facts!.claims);
    expect(got.seconds).toBeCloseTo(facts!.seconds, 3);
  }, 150_000);
});
