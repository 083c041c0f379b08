#!/usr/bin/env node
// `npm run bench:usage -- --json`: usage rollup and query speed on a private Postgres.
// Seeds CLAIMS claims (default 100,000) over 30 days in 4 pools of one tenant (each claim with
// the warm desktop it took, every tenth with a run), plus a second tenant of noise; then times one
// full rollup (every hour recomputed from facts) and QUERIES month-long usage queries
// (group_by=day). Prints {"bench":"usage","claims":…,"rollup_s":…,"query_p50_ms":…}.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { ensureDatabase, migrateDatabase } from '../lib/data.mjs';
import { log, percentile, round } from './lib/stack.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const load = (p) => import(pathToFileURL(join(root, p)).href);
const args = process.argv.slice(2);
const flag = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const CLAIMS = flag('claims', 100_000);
const QUERIES = flag('queries', 50);
const isJson = args.includes('--json');

const embedded = await load('packages/embedded/dist/index.js');
const { createDb, newId } = await load('packages/db/dist/index.js');
const { rollupUsage, getUsage } = await load('packages/control-plane/dist/index.js');
const { UsageQuery } = await load('packages/contract/dist/api/index.js');

const dir = mkdtempSync(join(tmpdir(), 'cubicle-bench-usage-'));
const server = await embedded.startPostgres({ dataDir: join(dir, 'pg'), log: () => {} });
let db;
try {
  const url = server.url('cubicle');
  await ensureDatabase(root, url, log);
  await migrateDatabase(root, url, log);
  db = createDb({ databaseUrl: url, maxConnections: 4 });
  const tenants = [newId('tenant'), newId('tenant')];
  await db.tenant.createMany({ data: tenants.map((id, i) => ({ id, name: `bench-${i}` })) });
  const pools = [];
  for (const [t, tenantId] of tenants.entries())
    for (let p = 0; p < (t === 0 ? 4 : 1); p++) {
      const id = newId('pool');
      pools.push(id);
      await db.pool.create({
        data: {
          id,
          tenantId,
          name: `pool-${p}`,
          image: 'img',
          backend: 'local',
          cpuMillis: 1000 * (p + 1),
          memoryMb: 2048,
          minSize: 2,
          initialSize: 2,
          maxSize: 50,
          claimTtlSeconds: 600,
          maxClaimLifetimeSeconds: 86_400,
        },
      });
    }
  const start = Date.parse('2026-11-01T00:00:00Z');
  const span = 30 * 86_400_000;
  log(`seeding ${CLAIMS} claims, their sandboxes and ${Math.floor(CLAIMS / 10)} runs`);
  const t0 = performance.now();
  // Generated in SQL: deterministic spread (warm 1-60 min, claims 1-120 min, runs 1-10 min).
  await db.$executeRawUnsafe(
    `
    WITH g AS (
      SELECT i, $2::text[] AS pools, $3::text[] AS tenants,
             to_timestamp($4::float8 / 1000 + ((i::bigint * 7919) % ($5::bigint / 1000)))::timestamptz AS claimed
      FROM generate_series(1, $1) i
    ), x AS (
      SELECT i, pools[1 + i % array_length(pools, 1)] AS pool_id,
             CASE WHEN i % array_length(pools, 1) = 4 THEN tenants[2] ELSE tenants[1] END AS tenant_id,
             claimed, claimed - make_interval(mins => 1 + i % 60) AS ready,
             claimed + make_interval(mins => 1 + (i * 31) % 120) AS released
      FROM g
    ), s AS (
      INSERT INTO sandboxes (id, tenant_id, pool_id, state, backend, image, generation, ready_at,
                             claimed_at, ended_at, created_at, updated_at)
      SELECT 'sbx_bench' || lpad(i::text, 17, '0'), tenant_id, pool_id, 'deleted', 'local', 'img', 1,
             ready, claimed, released, ready, released FROM x
    )
    INSERT INTO claims (id, tenant_id, pool_id, sandbox_id, name, status, ttl_seconds, expires_at,
                        max_expires_at, last_heartbeat_at, released_at, release_reason,
                        activated_at, created_at, updated_at)
    SELECT 'clm_bench' || lpad(i::text, 17, '0'), tenant_id, pool_id,
           'sbx_bench' || lpad(i::text, 17, '0'), 'c' || i, 'released', 600, released, released,
           claimed, released, 'released_by_client', claimed, claimed, released
    FROM x`,
    CLAIMS,
    pools,
    tenants,
    start,
    span,
  );
  await db.$executeRawUnsafe(`
    INSERT INTO runs (id, tenant_id, claim_id, status, argv, timeout_seconds, started_at, finished_at)
    SELECT 'run_bench' || substr(c.id, 10), c.tenant_id, c.id, 'succeeded', ARRAY['true'], 60,
           c.activated_at, c.activated_at + make_interval(mins => (1 + (row_number() OVER ()) % 10)::int)
    FROM claims c WHERE right(c.id, 1) = '0'`);
  await db.$executeRawUnsafe('ANALYZE');
  log(`seeded in ${round((performance.now() - t0) / 1000)} s`);

  const deps = { db, now: () => new Date(start + span + 3_600_000) };
  const r0 = performance.now();
  const result = await rollupUsage(deps);
  const rollupS = (performance.now() - r0) / 1000;
  log(`rollup: ${result.targets} pool-hours, ${result.rows} rows in ${round(rollupS)} s`);

  const query = UsageQuery.parse({
    from: new Date(start).toISOString(),
    to: new Date(start + span).toISOString(),
    group_by: 'day',
  });
  const times = [];
  let total = 0;
  for (let i = 0; i < QUERIES; i++) {
    const q0 = performance.now();
    const usage = await getUsage(deps, tenants[0], query);
    times.push(performance.now() - q0);
    total = usage.totals.claim_seconds;
  }
  // The rollup must account for every second it was given: compare with the facts directly.
  const [facts] = await db.$queryRawUnsafe(
    `SELECT sum(EXTRACT(EPOCH FROM LEAST(released_at, $2) - activated_at))::float8 AS s FROM claims
     WHERE tenant_id = $1 AND activated_at < $2`,
    tenants[0],
    new Date(start + span),
  );
  const out = {
    bench: 'usage',
    claims: CLAIMS,
    rollup_s: round(rollupS),
    query_p50_ms: round(percentile(times, 50)),
    query_p99_ms: round(percentile(times, 99)),
    pool_hours: result.targets,
    rows: result.rows,
    month_claim_seconds: total,
    facts_claim_seconds: facts.s,
  };
  if (isJson) console.log(JSON.stringify(out));
  else console.log(out);
} finally {
  await db?.$disconnect();
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
