#!/usr/bin/env node
// A live Cubicle for tests that run outside Vitest (the Terraform provider's acceptance tests):
// the whole stack of the benchmarks (scripts/bench/lib/stack.mjs: private PostgreSQL and Redis in
// a temp dir, migrations, the built worker — local backend, real desktops — and API on a loopback
// port) plus the keys the tests need. It prints one JSON line on stdout, then runs until
// SIGINT/SIGTERM or until its stdin closes (the parent exited), and stops everything it started,
// by pid, on the way out.
//   node test/harness/live-cubicle.mjs     (after the build: packages/*/dist, apps/*/dist)
// Output: {"endpoint","admin_key","member_key","revoked_key","other_tenant_key","other_pool","tenant_id",
//          "rate_limited_key","database_url","redis_url","keyring"}
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { startStack } from '../../scripts/bench/lib/stack.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const log = (line) => process.stderr.write(`live-cubicle: ${line}\n`);

const load = (p) => {
  const file = join(root, p);
  if (!existsSync(file)) throw new Error(`${p} is missing: build first (npm run build)`);
  return import(pathToFileURL(file).href);
};

let stack;
const stop = async () => stack?.stop();

async function start() {
  const tenancy = await load('packages/tenancy/dist/index.js');
  stack = await startStack({
    tenantName: 'terraform',
    // Claims end promptly at their TTL, so a drain the tests wait for is short.
    reclaimIntervalMs: 500,
    workerEnv: { CUBICLE_BACKENDS: 'local' },
  });
  const { db, tenantId } = stack;
  const memberKey = await tenancy.createApiKey(db, {
    tenantId,
    name: 'terraform-member',
    role: 'member',
  });
  const revoked = await tenancy.createApiKey(db, {
    tenantId,
    name: 'terraform-revoked',
    role: 'admin',
  });
  await tenancy.revokeApiKey(db, tenantId, revoked.id);
  const other = await tenancy.createTenant(db, { name: 'terraform-other' });
  const otherKey = await tenancy.createApiKey(db, {
    tenantId: other.id,
    name: 'terraform-other',
    role: 'admin',
  });
  // A tenant allowed one request a minute: the SDKs' tests get a real 429 with Retry-After.
  const limited = await tenancy.createTenant(db, {
    name: 'rate-limited',
    quotas: { requests_per_minute: 1 },
  });
  const limitedKey = await tenancy.createApiKey(db, {
    tenantId: limited.id,
    name: 'rate-limited',
    role: 'admin',
  });
  // A pool of the other tenant (no desktops: nothing warm), which the first tenant must not see.
  const otherPool = 'other-tenant-pool';
  const res = await fetch(`${stack.url}/v1/pools/${otherPool}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${otherKey.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ image: 'local', autoscaling: { min: 0, initial: 0, max: 1 } }),
  });
  if (res.status !== 201)
    throw new Error(`PUT other tenant's pool: ${res.status} ${await res.text()}`);
  return {
    endpoint: stack.url,
    tenant_id: tenantId,
    admin_key: stack.adminKey.key,
    member_key: memberKey.key,
    revoked_key: revoked.key,
    other_tenant_key: otherKey.key,
    other_pool: otherPool,
    rate_limited_key: limitedKey.key,
    // For tests that run (and kill) one more API process of this stack: same database, Redis
    // and keyring. Private to this temporary stack (a unix socket, a loopback port).
    database_url: stack.databaseUrl,
    redis_url: stack.redisUrl,
    keyring: stack.keyring,
  };
}

// startStack stops on SIGINT/SIGTERM itself; a hang-up and the parent's end do the same here.
process.once('SIGHUP', () => void stop().then(() => process.exit(0)));
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
