// bench:scale — the control plane (API, worker, Postgres, Redis: the real ones) holding many
// sandboxes, on HOLLOW sandboxes: one process (packages/backends/src/hollow) answers the guest
// protocol for all of them, so 10,000 fit on one machine. Usage:
//   npm run bench:scale -- --json [--sandboxes 10000] [--tenants 100] [--claims 5000]
// Prints one JSON object: claim latency at 32 concurrent, guest-call overhead (hollow guests
// answer at once), Redis connections of the worker process, RSS of worker and API, reconcile
// time over every sandbox, double claims, and claims/s with one and with two API processes.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { leanClient } from './lib/lean-http.mjs';
import { cpuSnapshot, cpuSpent } from './lib/process-cpu.mjs';
import { log, percentile, round, startStack } from './lib/stack.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const load = (p) => import(pathToFileURL(join(root, p)).href);
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const SANDBOXES = arg('sandboxes', 10_000);
const TENANTS = arg('tenants', 100);
const CLAIMS = arg('claims', Math.floor(SANDBOXES / 2));
const CONCURRENCY = 32;
const perTenant = Math.ceil(SANDBOXES / TENANTS);

const rssMb = (pid) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? round(Number(m[1]) / 1024, 1) : null;
};

/** pool runs `jobs` with `n` at a time and returns each one's result. */
async function pool(jobs, n) {
  const out = new Array(jobs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < jobs.length) {
        const i = next++;
        out[i] = await jobs[i]();
      }
    }),
  );
  return out;
}

const [{ startHollowGuests, createHollowBackend }, tenancy, cp] = await Promise.all([
  load('packages/backends/dist/index.js'),
  load('packages/tenancy/dist/index.js'),
  load('packages/control-plane/dist/index.js'),
]);
// The hollow guests run in this process; the worker provisions on them (HOLLOW_GUESTS).
const hollow = await startHollowGuests({ delayMs: 0 });
const stack = await startStack({
  apiCount: 2,
  tenantQuotas: { max_sandboxes: perTenant, max_concurrent_claims: perTenant },
  workerEnv: {
    HOLLOW_GUESTS: `${hollow.url}#${hollow.adminToken}`,
    PROVISION_CONCURRENCY: '64',
    WORKER_CONCURRENCY: '32',
    SWEEP_INTERVAL_MS: '600000',
  },
});
try {
  // Tenants, each with an admin key and one pool of perTenant hollow sandboxes.
  const tenants = [{ id: stack.tenantId, authorization: stack.authorization }];
  for (let i = 1; i < TENANTS; i++) {
    const t = await tenancy.createTenant(stack.db, {
      name: `bench-${i}`,
      quotas: {
        max_sandboxes: perTenant,
        max_concurrent_claims: perTenant,
        requests_per_minute: 1_000_000,
      },
    });
    const key = await tenancy.createApiKey(stack.db, { tenantId: t.id, name: 'b', role: 'admin' });
    tenants.push({ id: t.id, authorization: `Bearer ${key.key}` });
  }
  const req = async (apiUrl, t, method, path, body) => {
    const started = performance.now();
    const res = await fetch(`${apiUrl}${path}`, {
      method,
      headers: { authorization: t.authorization, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await res.json();
    return { status: res.status, body: json, ms: performance.now() - started };
  };
  const api0 = stack.apis[0].url;
  const started = Date.now();
  await pool(
    tenants.map(
      (t) => () =>
        req(api0, t, 'PUT', '/v1/pools/hollow', {
          image: 'hollow',
          autoscaling: { min: perTenant, initial: perTenant, max: perTenant },
        }),
    ),
    8,
  );
  await stack.waitFor(
    async () => (await stack.db.sandbox.count({ where: { state: 'warm' } })) >= SANDBOXES,
    1_800_000,
    `${SANDBOXES} warm hollow sandboxes`,
  );
  log(`${SANDBOXES} hollow sandboxes warm in ${(Date.now() - started) / 1000} s`);

  const rssBefore = { worker: rssMb(stack.workerPid), api: rssMb(stack.apis[0].pid) };
  // Claims at 32 concurrent over both APIs, round robin over tenants, until CLAIMS are live.
  const claimCpu0 = cpuSnapshot();
  const claimPhase0 = performance.now();
  const claims = await pool(
    Array.from({ length: CLAIMS }, (_, i) => async () => {
      const t = tenants[i % tenants.length];
      const r = await req(stack.apis[i % 2].url, t, 'POST', '/v1/pools/hollow/claims', {
        ttl_seconds: 3600,
      });
      if (r.status !== 201) throw new Error(`claim: ${r.status} ${JSON.stringify(r.body)}`);
      return { t, id: r.body.id, ms: r.ms };
    }),
    CONCURRENCY,
  );
  const claimMs = claims.slice(CONCURRENCY).map((c) => c.ms); // after the first round
  const claimPhaseS = (performance.now() - claimPhase0) / 1000;
  // Where the claim phase's CPU went (ms by process; this script is the client and the hollow
  // guests): at 32 concurrent, a claim's latency is the machine's claims/s, not one claim's path.
  const claimCpu = cpuSpent(claimCpu0, cpuSnapshot());
  log(`${CLAIMS} claims live in ${claimPhaseS.toFixed(1)} s; guest calls…`);

  // Guest calls on live claims, one at a time (hollow guests answer at once, so a call's whole
  // latency is the control plane's overhead: API → lane → worker → guest → pub/sub → API).
  // Sent by the lean HTTP client, as bench:claim's are: undici's fetch costs this machine about
  // a millisecond of CPU per request on the cores the control plane runs on, which is the
  // client's cost, not the overhead measured. The same calls by fetch are printed beside.
  const leanClients = new Map();
  const leanOf = async (api, t) => {
    const key = `${api}/${t.id}`;
    if (!leanClients.has(key))
      leanClients.set(key, await leanClient(api, 1, { authorization: t.authorization }));
    return leanClients.get(key);
  };
  const callsBy = (client) =>
    pool(
      Array.from({ length: 500 }, (_, i) => async () => {
        const c = claims[(i * 7919) % claims.length];
        const api = stack.apis[i % 2].url;
        const body = { argv: ['true'] };
        const path = `/v1/claims/${c.id}/shell`;
        const lean = client === 'lean' ? await leanOf(api, c.t) : null;
        const started = performance.now();
        const r = lean ? await lean('POST', path, body) : await req(api, c.t, 'POST', path, body);
        const ms = performance.now() - started;
        if (r.status !== 200) throw new Error(`call: ${r.status} ${JSON.stringify(r.body)}`);
        return ms;
      }),
      1,
    );
  // A claim's first call through an API looks its sandbox up; its later calls (an agent makes
  // hundreds) go by the route that API remembers. Both are printed; the headline is the later.
  const firstCalls = await callsBy('lean');
  const calls = await callsBy('lean');
  const callsByFetch = await callsBy('fetch');
  for (const c of leanClients.values()) c.close();
  log('guest calls done; reconcile and throughput…');

  const clients = execFileSync('redis-cli', [
    '-s',
    new URL(stack.redisUrl).pathname,
    'CLIENT',
    'LIST',
  ])
    .toString()
    .split('\n');
  // Named by the worker's REDIS_URL (?name=); BullMQ may rename the duplicates it makes, so the
  // whole server's count (worker + two APIs + this script's CLIENT LIST) is printed beside it.
  const redisConnections = clients.filter((l) => / name=\S*cubicle-worker/.test(l)).length;
  const redisClientsTotal = clients.filter((l) => l.startsWith('id=')).length;

  // Reconcile of every pool and the backend sweep: reconcileAll, what the worker's periodic
  // `pools.sweep` job runs, timed here (twice: the first pays for preparing its statements).
  const db = stack.db;
  const backend = createHollowBackend({ url: hollow.url, adminToken: hollow.adminToken });
  // A control plane of this script's own: nothing listens for its jobs or announcements.
  const deps = cp.createResources({
    db,
    queues: { enqueue: async () => undefined },
    redis: { publish: async () => 0 },
    prefix: 'bench-scale',
    keyring: cp.parseKeyring(cp.newKeyringSpec()),
    backends: { local: backend },
  });
  const reconcileRuns = [];
  for (let i = 0; i < 2; i++) {
    const reconcileStarted = performance.now();
    const swept = await cp.reconcileAll(deps);
    reconcileRuns.push(performance.now() - reconcileStarted);
    if (swept.pools < TENANTS) throw new Error(`reconcile saw ${swept.pools} pools`);
  }
  const reconcileMs = reconcileRuns[1];

  const [{ doubles }] = await db.$queryRawUnsafe(
    `SELECT count(*)::int AS doubles FROM (SELECT sandbox_id FROM claims WHERE status = 'active'
       GROUP BY sandbox_id HAVING count(*) > 1) d`,
  );
  const live = await db.claim.count({ where: { status: 'active' } });
  const workerRss = rssMb(stack.workerPid);
  const apiRss = rssMb(stack.apis[0].pid);

  // Throughput: release, let the pools refill, then a burst through one API, then through two.
  const throughput = {};
  for (const apiCount of [1, 2]) {
    await pool(
      claims.map((c, i) => () => req(stack.apis[i % 2].url, c.t, 'DELETE', `/v1/claims/${c.id}`)),
      CONCURRENCY,
    );
    // Also until the released sandboxes are destroyed, as bench:claim waits: destroy jobs still
    // running during the burst would measure how far behind they are, not the claim path.
    let told = Date.now();
    await stack.waitFor(
      async () => {
        const by = await db.sandbox.groupBy({ by: ['state'], _count: { _all: true } });
        const n = Object.fromEntries(by.map((g) => [g.state, g._count._all]));
        if (Date.now() - told > 10_000) {
          told = Date.now();
          log(`refilling: ${JSON.stringify(n)}`);
        }
        return (n.warm ?? 0) >= SANDBOXES && !n.releasing;
      },
      1_800_000,
      'refill',
    );
    const t0 = performance.now();
    const burst = await pool(
      Array.from({ length: CLAIMS }, (_, i) => async () => {
        const t = tenants[i % tenants.length];
        const r = await req(stack.apis[i % apiCount].url, t, 'POST', '/v1/pools/hollow/claims', {
          ttl_seconds: 3600,
        });
        return { t, id: r.body.id, ok: r.status === 201 };
      }),
      CONCURRENCY,
    );
    throughput[`claims_per_s_${apiCount}_api`] = round(
      burst.filter((b) => b.ok).length / ((performance.now() - t0) / 1000),
      1,
    );
    claims.splice(0, claims.length, ...burst.filter((b) => b.ok));
  }

  const result = {
    bench: 'scale',
    sandboxes: SANDBOXES,
    tenants: TENANTS,
    claims_live: live,
    claim_p50_ms: round(percentile(claimMs, 50)),
    claim_p99_ms: round(percentile(claimMs, 99)),
    claim_phase_claims_per_s: round(CLAIMS / claimPhaseS, 1),
    claim_phase_cpu_ms_by_process: claimCpu,
    guest_call_overhead_p50_ms: round(percentile(calls, 50)),
    guest_call_overhead_p99_ms: round(percentile(calls, 99)),
    guest_call_first_call_p50_ms: round(percentile(firstCalls, 50)),
    guest_call_overhead_fetch_p50_ms: round(percentile(callsByFetch, 50)),
    redis_connections: redisConnections,
    redis_clients_total: redisClientsTotal,
    worker_rss_mb: workerRss,
    api_rss_mb: apiRss,
    // RSS growth per live claim (KB), API process 0 (half the claims) and the worker.
    api_rss_kb_per_claim: round(((apiRss - rssBefore.api) * 1024) / (live / 2), 2),
    worker_rss_kb_per_claim: round(((workerRss - rssBefore.worker) * 1024) / live, 2),
    reconcile_ms: round(reconcileMs),
    reconcile_first_ms: round(reconcileRuns[0]),
    double_claims: doubles,
    throughput,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  await stack.stop();
  await hollow.close();
}
