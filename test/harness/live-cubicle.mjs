#!/usr/bin/env node
// A live Cubicle for tests that run outside Vitest (the Terraform provider's acceptance tests):
// private PostgreSQL and Redis in a temp dir, migrations, the built worker (local backend: real
// desktops) and API on a loopback port, and the keys the tests need. It prints one JSON line on
// stdout, then runs until SIGINT/SIGTERM or until its stdin closes (the parent exited), and stops
// everything it started, by pid, on the way out.
//   node test/harness/live-cubicle.mjs     (after the build: packages/*/dist, apps/*/dist)
// Output: {"endpoint","admin_key","member_key","revoked_key","other_tenant_key","other_pool","tenant_id"}
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = new URL('../../', import.meta.url).pathname;
const log = (line) => process.stderr.write(`live-cubicle: ${line}\n`);

const load = (p) => {
  const file = join(root, p);
  if (!existsSync(file)) throw new Error(`${p} is missing: build first (npm run build)`);
  return import(pathToFileURL(file).href);
};

function spawnApp(name, entry, env) {
  const child = spawn(process.execPath, [join(root, entry)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  const keep = (d) => (tail = (tail + d.toString()).slice(-4000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  child.once('exit', (code, signal) => {
    if (stopping) return;
    exitedEarly = `${name} exited early (${signal ?? code})`;
    log(`${exitedEarly}; its last output:\n${tail}`);
  });
  return async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    await once(child, 'exit');
    clearTimeout(timer);
  };
}

async function waitFor(check, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (exitedEarly) throw new Error(exitedEarly);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const stops = [];
let stopping;
let exitedEarly;
const dir = mkdtempSync(join(tmpdir(), 'cubicle-live-'));
const stop = () =>
  (stopping ??= (async () => {
    for (const s of stops.reverse()) await s().catch((e) => log(`stop: ${e.message}`));
    rmSync(dir, { recursive: true, force: true });
  })());

async function start() {
  const [embedded, { migrate }, { createDb }, tenancy] = await Promise.all([
    load('packages/embedded/dist/index.js'),
    load('packages/db/dist/migrate/index.js'),
    load('packages/db/dist/index.js'),
    load('packages/tenancy/dist/index.js'),
  ]);
  // Postgres runs as its own user when we are root; it must be able to reach its data dir.
  chmodSync(dir, 0o755);
  const pg = await embedded.startPostgres({ dataDir: join(dir, 'postgres'), isDurable: false });
  stops.push(() => pg.stop());
  const redis = await embedded.startRedis({ dir: join(dir, 'redis') });
  stops.push(() => redis.stop());
  const pgLib = await import(pathToFileURL(join(root, 'node_modules/pg/lib/index.js')).href);
  const admin = new pgLib.default.Client({ connectionString: pg.adminUrl });
  await admin.connect();
  await admin.query('CREATE DATABASE cubicle');
  await admin.end();
  const databaseUrl = pg.url('cubicle');
  await migrate({ databaseUrl });
  const db = createDb({ databaseUrl, maxConnections: 2 });
  stops.push(() => db.$disconnect());

  const tenant = await tenancy.createTenant(db, { name: 'terraform' });
  const adminKey = await tenancy.createApiKey(db, {
    tenantId: tenant.id,
    name: 'terraform-admin',
    role: 'admin',
  });
  const memberKey = await tenancy.createApiKey(db, {
    tenantId: tenant.id,
    name: 'terraform-member',
    role: 'member',
  });
  const revoked = await tenancy.createApiKey(db, {
    tenantId: tenant.id,
    name: 'terraform-revoked',
    role: 'admin',
  });
  await tenancy.revokeApiKey(db, tenant.id, revoked.id);
  const other = await tenancy.createTenant(db, { name: 'terraform-other' });
  const otherKey = await tenancy.createApiKey(db, {
    tenantId: other.id,
    name: 'terraform-other',
    role: 'admin',
  });

  const env = {
    DATABASE_URL: databaseUrl,
    REDIS_URL: redis.url,
    CUBICLE_KEYRING: `k1:${randomBytes(32).toString('base64')}`,
    CUBICLE_BACKENDS: 'local',
    LOG_LEVEL: 'warn',
    // Claims end promptly at their TTL, so a drain the tests wait for is short.
    RECLAIM_INTERVAL_MS: '500',
  };
  stops.push(spawnApp('worker', 'apps/worker/dist/main.js', env));
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  stops.push(
    spawnApp('api', 'apps/api/dist/main.js', {
      ...env,
      API_HOST: '127.0.0.1',
      API_PORT: String(port),
    }),
  );
  const endpoint = `http://127.0.0.1:${port}`;
  await waitFor(
    async () => (await fetch(`${endpoint}/healthz`).catch(() => null))?.ok === true,
    60_000,
    'the API',
  );
  // A pool of the other tenant (no desktops: nothing warm), which the first tenant must not see.
  const otherPool = 'other-tenant-pool';
  const res = await fetch(`${endpoint}/v1/pools/${otherPool}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${otherKey.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ image: 'local', autoscaling: { min: 0, initial: 0, max: 1 } }),
  });
  if (res.status !== 201)
    throw new Error(`PUT other tenant's pool: ${res.status} ${await res.text()}`);
  return {
    endpoint,
    tenant_id: tenant.id,
    admin_key: adminKey.key,
    member_key: memberKey.key,
    revoked_key: revoked.key,
    other_tenant_key: otherKey.key,
    other_pool: otherPool,
  };
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(signal, () => void stop().then(() => process.exit(0)));
}
// The parent holds our stdin open; when it goes away (even by SIGKILL), we stop too.
process.stdin.resume();
process.stdin.once('end', () => void stop().then(() => process.exit(0)));

try {
  const started = performance.now();
  const info = await start();
  log(`ready at ${info.endpoint} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  process.stdout.write(`${JSON.stringify(info)}\n`);
} catch (error) {
  log(`could not start: ${error.stack ?? error.message}`);
  await stop();
  process.exit(1);
}
