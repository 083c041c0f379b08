// A whole Cubicle for a benchmark, from the built packages: private Postgres and Redis in a temp
// dir, migrations, a tenant with an admin key, the worker (local backend: real desktops) and the
// API on a loopback port. stop() ends everything it started, by pid, and removes the temp dir.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { leanClient } from './lean-http.mjs';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const load = (p) => {
  const file = join(root, p);
  if (!existsSync(file))
    throw new Error(`${p} is missing: run \`npm run bootstrap\` (or npm run build) first`);
  return import(pathToFileURL(file).href);
};

/** log goes to stderr so stdout stays one JSON object per line. */
export const log = (line) => process.stderr.write(`bench: ${line}\n`);

/** The first app that exited before stop() was asked of it, and how (waitFor gives up at once). */
let exitedEarly;
let isStopping = false;

function spawnApp(entry, env) {
  // BENCH_CPU_PROF_DIR=dir writes a V8 CPU profile of each app there (open it in Chrome DevTools).
  const prof = process.env.BENCH_CPU_PROF_DIR
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`]
    : [];
  const child = spawn(process.execPath, [...prof, join(root, entry)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  const keep = (d) => (tail = (tail + d.toString()).slice(-4000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  child.once('exit', (code, signal) => {
    if (isStopping) return;
    exitedEarly ??= `${entry} exited early (${signal ?? code}); its last output:\n${tail}`;
  });
  return {
    child,
    tail: () => tail,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await once(child, 'exit');
      clearTimeout(timer);
    },
  };
}

async function waitFor(check, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (exitedEarly) throw new Error(exitedEarly);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * startStack starts the whole Cubicle. `withWorker: false` leaves the worker out, for benchmarks
 * of the API's own path on rows they seed themselves (no desktops). Also the live Cubicle of the
 * Terraform provider's acceptance tests (test/harness/live-cubicle.mjs), which names its tenant.
 */
export async function startStack({
  reclaimIntervalMs = 500,
  withWorker = true,
  workerEnv = {},
  tenantQuotas = {},
  tenantName = 'bench',
  apiCount = 1,
} = {}) {
  const [embedded, { migrate }, { createDb }, tenancy] = await Promise.all([
    load('packages/embedded/dist/index.js'),
    load('packages/db/dist/migrate/index.js'),
    load('packages/db/dist/index.js'),
    load('packages/tenancy/dist/index.js'),
  ]);
  const dir = mkdtempSync(join(tmpdir(), 'cubicle-bench-'));
  // Postgres runs as its own user when we are root; it must be able to reach its data dir.
  chmodSync(dir, 0o755);
  const stops = [];
  let stopping;
  const stop = () =>
    (stopping ??= (async () => {
      isStopping = true;
      for (const s of stops.reverse()) await s().catch((e) => log(`stop: ${e.message}`));
      rmSync(dir, { recursive: true, force: true });
    })());
  // Ctrl-C during a long bench still stops every process it started.
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      log(`${signal}: stopping`);
      void stop().then(() => process.exit(130));
    });
  }
  try {
    const pg = await embedded.startPostgres({ dataDir: join(dir, 'postgres'), isDurable: false });
    stops.push(() => pg.stop());
    const redis = await embedded.startRedis({ dir: join(dir, 'redis') });
    stops.push(() => redis.stop());
    const admin = await import(pathToFileURL(join(root, 'node_modules/pg/lib/index.js')).href);
    const client = new admin.default.Client({ connectionString: pg.adminUrl });
    await client.connect();
    await client.query('CREATE DATABASE cubicle');
    await client.end();
    const databaseUrl = pg.url('cubicle');
    await migrate({ databaseUrl });
    const db = createDb({ databaseUrl, maxConnections: 4 });
    stops.push(() => db.$disconnect());
    const tenant = await tenancy.createTenant(db, {
      name: tenantName,
      quotas: {
        max_sandboxes: 1000,
        max_concurrent_claims: 10_000,
        requests_per_minute: 1_000_000,
        ...tenantQuotas,
      },
    });
    const key = await tenancy.createApiKey(db, {
      tenantId: tenant.id,
      name: tenantName,
      role: 'admin',
    });
    const env = {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redis.url,
      CUBICLE_KEYRING: `k1:${randomBytes(32).toString('base64')}`,
      LOG_LEVEL: 'warn',
      RECLAIM_INTERVAL_MS: String(reclaimIntervalMs),
    };
    // Each app's Redis connections carry its name (CLIENT LIST tells the processes apart).
    const named = (name) => `${redis.url}${redis.url.includes('?') ? '&' : '?'}name=${name}`;
    let worker;
    if (withWorker) {
      worker = spawnApp('apps/worker/dist/main.js', {
        ...env,
        REDIS_URL: named('cubicle-worker'),
        WORKER_CONCURRENCY: '16',
        ...workerEnv,
      });
      stops.push(() => worker.stop());
    }
    const apis = [];
    for (let i = 0; i < apiCount; i++) {
      const port = 20_000 + Math.floor(Math.random() * 20_000);
      const api = spawnApp('apps/api/dist/main.js', {
        ...env,
        REDIS_URL: named(`cubicle-api${i}`),
        API_HOST: '127.0.0.1',
        API_PORT: String(port),
      });
      stops.push(() => api.stop());
      apis.push({ url: `http://127.0.0.1:${port}`, pid: api.child.pid });
    }
    const url = apis[0].url;
    // At load 20-30 on this 2-core machine an API did not answer within 30 s (importing apps/api
    // alone took 15.7 s at load 30): a loaded machine is slow, not broken.
    for (const a of apis)
      await waitFor(
        async () => (await fetch(`${a.url}/healthz`).catch(() => null))?.ok === true,
        120_000,
        'the API',
      );
    const headers = { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' };
    const call = async (method, path, body) => {
      const res = await fetch(`${url}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: await res.json() };
    };
    /** httpClient opens `sockets` kept-alive connections of the lean client (lib/lean-http.mjs). */
    const httpClient = (sockets) =>
      leanClient(url, sockets, { authorization: headers.authorization });
    return {
      url,
      /** Every API process (apiCount), with its pid. */
      apis,
      /** The private Postgres's postmaster pid (its backends are its children). */
      postgresPid: pg.pid,
      /** The worker's pid (withWorker), e.g. to read its RSS. */
      workerPid: worker?.child.pid,
      db,
      httpClient,
      databaseUrl,
      /** The tenant's admin key (secret included). */
      adminKey: key,
      /** The private Redis (unix socket URL), for benchmarks that start another process on it. */
      redisUrl: redis.url,
      tenantId: tenant.id,
      call,
      /** The keyring the worker seals guest tokens with (benchmarks that call a guest directly open them). */
      keyring: env.CUBICLE_KEYRING,
      /** The admin key's authorization header, for benchmarks with their own HTTP client. */
      authorization: headers.authorization,
      stop,
      /** applyPool and wait until `warm` sandboxes are warm. */
      async warmPool(name, spec, warm) {
        const res = await call('PUT', `/v1/pools/${name}`, spec);
        if (res.status >= 300)
          throw new Error(`PUT pool: ${res.status} ${JSON.stringify(res.body)}`);
        const started = Date.now();
        await waitFor(
          async () => (await call('GET', `/v1/pools/${name}`)).body.counts.warm >= warm,
          600_000,
          `${warm} warm desktops`,
        );
        return (Date.now() - started) / 1000;
      },
      waitFor,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** cpuTimes reads the machine's idle and total CPU time (all cores) from /proc/stat. */
function cpuTimes() {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1);
  const n = fields.map(Number);
  return { idle: n[3] + (n[4] ?? 0), total: n.reduce((a, b) => a + b, 0) };
}

/**
 * waitQuiet waits `settleMs`, then until the machine's CPU is mostly idle for a whole second (or
 * the timeout passes), and returns the busy percentage of the last second. Desktops keep working
 * for a while after they report ready (each guest daemon's V8 runs a memory-reducing GC of
 * 40-80 ms about 8 s after start, too short to show in a busy percentage); a warm pool in service
 * has long settled, so benchmarks measure after that.
 */
export async function waitQuiet({ settleMs = 0, maxBusyPercent = 15, timeoutMs = 30_000 } = {}) {
  await new Promise((r) => setTimeout(r, settleMs));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const a = cpuTimes();
    await new Promise((r) => setTimeout(r, 1000));
    const b = cpuTimes();
    const busy = 100 * (1 - (b.idle - a.idle) / Math.max(1, b.total - a.total));
    if (busy <= maxBusyPercent || Date.now() > deadline) return Math.round(busy);
  }
}

export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

export const round = (v, digits = 2) => (v === null ? null : Number(v.toFixed(digits)));

/**
 * burstLatencies sends `concurrency` requests at once through `client` and resolves with each
 * one's latency (ms); a non-2xx answer fails the burst. Benchmarks time a burst of GET
 * /v1/version (no authentication, no database, a constant answer) beside their own bursts: the
 * floor this machine's HTTP path and scheduler set for any route at that concurrency.
 */
export async function burstLatencies(client, concurrency, method, path, body) {
  return Promise.all(
    Array.from({ length: concurrency }, async () => {
      const started = performance.now();
      const res = await client(method, path, body);
      if (res.status < 200 || res.status >= 300)
        throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
      return performance.now() - started;
    }),
  );
}
