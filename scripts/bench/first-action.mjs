#!/usr/bin/env node
// npm run bench:first-action -- --json [--iterations 20] [--concurrency 8] [--rounds 3]
// Time to first confirmed action, as an agent's owner feels it: claim a desktop whose browser
// already shows a page → observe the page → click a link by its element token → the click's
// ActionResult says `confirmed`. Measured by the client over real HTTP, sequentially and at
// `--concurrency` concurrent agents (with the same run's HTTP floor: the same burst on GET
// /v1/version), against the goals of issue 38. Then the density: the memory of a warm desktop
// with the browser on the page against an idle unprimed one, and desktops per GiB.
//
// The page is a file:// page of a Debian package's HTML documentation: a local desktop runs in a
// network namespace of its own (only its own loopback), so a server on the host's loopback is not
// reachable from its browser; a file under /usr is (mounted read-only into every sandbox).
//
// Primed pools (`prime` in the pool spec) are used when the API accepts them. Otherwise the
// browser is launched through the windows launch API after the claim, and that launch (and the
// page load) is left out of the measured span: the line says `"primed": false`.
// Prints one JSON object per line, with the guest's own time for the observe and the click
// beside their round trips (the difference is the way through the API, the lane and the worker),
// the HTTP floor (GET /v1/version: one at a time for the sequential line, a burst for the
// concurrent one) and the machine's 1-min load average (the machine is shared).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { hopsP50, parseServerTiming } from './lib/server-timing.mjs';
import { burstLatencies, log, percentile, round, startStack, waitQuiet } from './lib/stack.mjs';

const args = process.argv.slice(2);
const arg = (name, fallback) =>
  args.includes(name) ? Number(args[args.indexOf(name) + 1]) || fallback : fallback;
const iterations = arg('--iterations', 20);
const concurrency = arg('--concurrency', 8);
const rounds = arg('--rounds', 3);
const POOL = 'first-action';

/** The page and the link the agent clicks (its title after the click is the evidence). */
const PAGES = [
  { file: '/usr/share/doc/libxslt1-dev/html/index.html', title: 'libxslt', link: 'Introduction' },
];
const page = PAGES.find((p) => existsSync(p.file));
if (!page) throw new Error(`none of the bench pages is installed: ${PAGES.map((p) => p.file)}`);
const pageUrl = `file://${page.file}`;

/** The goals of issue 38 (sequential, ms) and the concurrent one's floor multiple. */
const GOAL = { p50Ms: 100, p99Ms: 250, floorTimes: 3 };

/** The machine is shared: its load when the bench started, printed beside the figures. */
const startLoad = round(loadavg()[0]);
const stack = await startStack();
try {
  const spec = (initial) => ({
    image: 'local',
    autoscaling: { min: 0, initial, max: Math.max(concurrency, 2) },
  });
  const primedSpec = (initial) => ({
    ...spec(initial),
    prime: {
      apps: [
        // Primed until the link the agent clicks is in the page's accessibility tree: the page
        // is loaded and the tree has been read once, as an agent's first observe needs it.
        {
          app: 'browser',
          url: pageUrl,
          wait_for: { kind: 'element', name: page.link, role: 'link' },
        },
      ],
      timeout_seconds: 120,
    },
  });
  // Prime when the API knows it (a pool answer that shows it back) and a claimed desktop lists
  // its primed browser window; else launch after the claim.
  const probe = await stack.call('PUT', `/v1/pools/${POOL}`, primedSpec(1));
  let primed = probe.status < 300 && probe.body?.prime != null;
  if (primed) {
    await stack.waitFor(
      async () => {
        const { counts } = (await stack.call('GET', `/v1/pools/${POOL}`)).body;
        return counts.warm >= 1 || counts.failed >= 1;
      },
      600_000,
      'a primed desktop',
    );
    const first = await stack.call('POST', `/v1/pools/${POOL}/claims`, { wait_seconds: 0 });
    primed = (first.body?.primed_windows ?? []).some((w) => w.app === 'browser');
    if (first.body?.id) await stack.call('DELETE', `/v1/claims/${first.body.id}`);
    if (!primed) log('the pool accepts prime but its desktop lists no primed browser window');
  }
  const specOf = (initial) => (primed ? primedSpec(initial) : spec(initial));
  if (!primed) {
    log(`pool prime not available (PUT answered ${probe.status}): launching after the claim`);
    const plain = await stack.call('PUT', `/v1/pools/${POOL}`, spec(0));
    if (plain.status >= 300)
      throw new Error(`PUT pool: ${plain.status} ${JSON.stringify(plain.body)}`);
  }
  const client = await stack.httpClient(concurrency);
  const drive = (claimId, path, body) => client('POST', `/v1/claims/${claimId}/${path}`, body);

  /** refill makes `n` desktops warm, then holds the pool (no desktop boots while we measure). */
  async function refill(n) {
    await stack.call('PUT', `/v1/pools/${POOL}`, specOf(n));
    await stack.waitFor(
      async () => {
        const { counts } = (await stack.call('GET', `/v1/pools/${POOL}`)).body;
        return counts.warm >= n && counts.releasing === 0 && counts.provisioning === 0;
      },
      600_000,
      `${n} warm desktops`,
    );
    await stack.call('PUT', `/v1/pools/${POOL}`, specOf(0));
  }

  /** claim: the measured claim call; the window the browser shows (primed) or null. */
  async function claim() {
    const started = performance.now();
    const res = await client('POST', `/v1/pools/${POOL}/claims`, {
      wait_seconds: 0,
      ttl_seconds: 900,
    });
    const ms = performance.now() - started;
    if (res.status !== 201) throw new Error(`claim: ${res.status} ${JSON.stringify(res.body)}`);
    const windowId = primed
      ? res.body.primed_windows?.find((w) => w.app === 'browser')?.window_id
      : null;
    if (primed && windowId === undefined)
      throw new Error(`a primed claim without its browser window: ${JSON.stringify(res.body)}`);
    return { id: res.body.id, ms, windowId };
  }

  /** openPage (unprimed only, not measured): the browser on the page, its link observable. */
  async function openPage(claimId) {
    const launched = await drive(claimId, 'windows/launch', {
      app: 'browser',
      url: pageUrl,
      wait_for_window_ms: 60_000,
    });
    const windowId = launched.body?.window?.window_id;
    if (launched.status !== 200 || windowId === undefined)
      throw new Error(`launch: ${launched.status} ${JSON.stringify(launched.body)}`);
    const ready = await drive(claimId, 'verify', {
      window_id: windowId,
      predicates: [{ kind: 'element_exists', selector: { role: 'link', name: page.link } }],
      timeout_ms: 60_000,
    });
    if (ready.body?.status !== 'satisfied')
      throw new Error(`the page never showed its link: ${JSON.stringify(ready.body)}`);
    return windowId;
  }

  /** observeAndClick: the measured observe and click; the click's effect. */
  async function observeAndClick(claimId, windowId) {
    const started = performance.now();
    const seen = await drive(claimId, 'observe', {
      window_id: windowId,
      include_screenshot: false,
    });
    const observed = performance.now();
    const link = seen.body?.elements?.find((e) => e.role === 'link' && e.name === page.link);
    if (!link) throw new Error(`observe: no link "${page.link}" (${seen.status})`);
    const act = await drive(claimId, 'act', {
      window_id: windowId,
      element_token: link.element_token,
      action: 'click',
    });
    const done = performance.now();
    return {
      observeMs: observed - started,
      clickMs: done - observed,
      // The guest's own time for each (duration_ms of its answer): the rest of the round trip is
      // the way through the API, the lane and the worker.
      observeGuestMs: seen.body?.duration_ms ?? null,
      clickGuestMs: act.body?.duration_ms ?? null,
      // Where each call's time went on the way (Server-Timing: API, lane, worker's parts).
      observeHops: parseServerTiming(seen.serverTiming),
      clickHops: parseServerTiming(act.serverTiming),
      effect: act.body?.effect ?? `http ${act.status}`,
    };
  }

  /** serverFigure: the claim's own time_to_first_confirmed_action_ms, then the release. */
  async function finish(claimId) {
    const shown = (await stack.call('GET', `/v1/claims/${claimId}`)).body;
    await stack.call('DELETE', `/v1/claims/${claimId}`);
    return shown.time_to_first_confirmed_action_ms ?? null;
  }

  /**
   * flows runs `n` first actions at once, in phases: every claim together; (unprimed: every
   * browser launched and its page loaded, then the machine left to settle, none of it timed);
   * every observe + click together. A flow's figure is its claim plus its observe and click.
   */
  async function flows(n) {
    const claims = await Promise.all(Array.from({ length: n }, () => claim()));
    if (!primed) {
      const windows = await Promise.all(claims.map((c) => openPage(c.id)));
      windows.forEach((w, i) => (claims[i].windowId = w));
      await waitQuiet({ settleMs: 1000, timeoutMs: 5000 });
    }
    const acts = await Promise.all(claims.map((c) => observeAndClick(c.id, c.windowId)));
    const server = await Promise.all(claims.map((c) => finish(c.id)));
    return claims.map((c, i) => ({
      ms: c.ms + acts[i].observeMs + acts[i].clickMs,
      claimMs: c.ms,
      ...acts[i],
      serverMs: server[i],
    }));
  }

  // Sequential: one agent at a time, a fresh warm desktop each.
  // Desktops are warmed a batch at a time and claimed one by one, the machine quiet before each.
  const sequential = [];
  let warmLeft = 0;
  for (let i = 0; i < iterations; i++) {
    if (warmLeft === 0) {
      warmLeft = Math.min(concurrency, iterations - i);
      await refill(warmLeft);
    }
    // A busy machine (other work) never goes quiet: wait a little, not the default 30 s.
    await waitQuiet({ settleMs: 1000, timeoutMs: 3000 });
    warmLeft--;
    const [flow] = await flows(1);
    sequential.push(flow);
    log(
      `sequential ${i + 1}/${iterations}: ${round(flow.ms)} ms (${flow.effect}) click ${round(flow.clickMs)} guest ${round(flow.clickGuestMs)} hops ${JSON.stringify(flow.clickHops)}`,
    );
  }
  const seq = summary(sequential);
  // The sequential floor: one GET /v1/version at a time (no key, no database), as many as flows.
  const seqFloor = [];
  for (let i = 0; i < Math.max(20, iterations); i++) {
    const t0 = performance.now();
    await client('GET', '/v1/version');
    seqFloor.push(performance.now() - t0);
  }
  process.stdout.write(
    `${JSON.stringify({
      bench: 'first-action',
      concurrency: 1,
      p50_ms: seq.p50,
      p99_ms: seq.p99,
      primed,
      samples: sequential.length,
      confirmed: seq.confirmed,
      claim_p50_ms: seq.claimP50,
      observe_p50_ms: seq.observeP50,
      click_p50_ms: seq.clickP50,
      observe_guest_p50_ms: seq.observeGuestP50,
      click_guest_p50_ms: seq.clickGuestP50,
      observe_hops_p50_ms: seq.observeHopsP50,
      click_hops_p50_ms: seq.clickHopsP50,
      http_floor_p50_ms: round(percentile(seqFloor, 50)),
      loadavg_1m_start: startLoad,
      loadavg_1m: round(loadavg()[0]),
      // The claim's own figure (created → the click's ActionResult stored): includes the
      // launch and page load when unprimed.
      server_ttfca_p50_ms: seq.serverP50,
      page: pageUrl,
      goals: [
        goal('p50_ms <= 100', seq.p50, GOAL.p50Ms),
        goal('p99_ms <= 250', seq.p99, GOAL.p99Ms),
      ],
    })}\n`,
  );

  // Concurrent: `concurrency` agents at once, rounds of them, with the HTTP floor of each round.
  const concurrent = [];
  const floor = [];
  for (let r = 0; r < rounds; r++) {
    await refill(concurrency);
    await waitQuiet({ settleMs: 5000, timeoutMs: 10_000 });
    await Promise.all(Array.from({ length: concurrency }, () => client('GET', '/v1/version')));
    floor.push(...(await burstLatencies(client, concurrency, 'GET', '/v1/version')));
    const got = await flows(concurrency);
    concurrent.push(...got);
    log(
      `round ${r + 1}/${rounds} at ${concurrency}: max ${round(Math.max(...got.map((f) => f.ms)))} ms`,
    );
  }
  const con = summary(concurrent);
  const floorP99 = percentile(floor, 99);
  const limit = GOAL.floorTimes * floorP99 + seq.p50;
  process.stdout.write(
    `${JSON.stringify({
      bench: 'first-action',
      concurrency,
      p50_ms: con.p50,
      p99_ms: con.p99,
      primed,
      samples: concurrent.length,
      confirmed: con.confirmed,
      claim_p50_ms: con.claimP50,
      observe_p50_ms: con.observeP50,
      click_p50_ms: con.clickP50,
      observe_guest_p50_ms: con.observeGuestP50,
      click_guest_p50_ms: con.clickGuestP50,
      observe_hops_p50_ms: con.observeHopsP50,
      click_hops_p50_ms: con.clickHopsP50,
      loadavg_1m: round(loadavg()[0]),
      http_floor_p50_ms: round(percentile(floor, 50)),
      http_floor_p99_ms: round(floorP99),
      goals: [
        {
          ...goal('p99_ms <= 3 × http_floor_p99_ms + sequential p50_ms', con.p99, round(limit)),
          ratio: round(con.p99 / limit),
        },
      ],
    })}\n`,
  );

  process.stdout.write(`${JSON.stringify(await density(primed))}\n`);
} finally {
  await stack.stop();
}

/**
 * density compares a warm desktop with the browser on the page against an idle unprimed one,
 * each left to settle (the guest's V8 shrinks its heap ~10 s after start). Memory is summed over
 * the processes of the desktop's cgroup: RSS (what the desktop bench's goal is stated in) and PSS
 * (shared pages split between the processes mapping them: what one more desktop costs).
 */
async function density(primed) {
  const SETTLE_MS = 15_000;
  const idlePool = `${POOL}-idle`;
  await stack.warmPool(
    idlePool,
    { image: 'local', autoscaling: { min: 0, initial: 1, max: 1 } },
    1,
  );
  let browserSandbox;
  let claimId;
  // The desktop with the browser: a primed warm one, or an unprimed one claimed and launched.
  const browserPool = `${POOL}-browser`;
  await stack.warmPool(
    browserPool,
    primed
      ? {
          image: 'local',
          autoscaling: { min: 0, initial: 1, max: 1 },
          prime: {
            apps: [
              {
                app: 'browser',
                url: pageUrl,
                wait_for: { kind: 'element', name: page.link, role: 'link' },
              },
            ],
            timeout_seconds: 120,
          },
        }
      : { image: 'local', autoscaling: { min: 0, initial: 1, max: 1 } },
    1,
  );
  if (!primed) {
    const c = (await stack.call('POST', `/v1/pools/${browserPool}/claims`, { ttl_seconds: 900 }))
      .body;
    claimId = c.id;
    browserSandbox = c.sandbox.id;
    const launched = await stack.call('POST', `/v1/claims/${c.id}/windows/launch`, {
      app: 'browser',
      url: pageUrl,
      wait_for_window_ms: 60_000,
    });
    if (launched.status !== 200) throw new Error(`launch: ${JSON.stringify(launched.body)}`);
  }
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  const sandboxes = await stack.db.sandbox.findMany({
    where: { pool: { name: { in: [idlePool, browserPool] } }, state: { in: ['warm', 'claimed'] } },
    include: { pool: { select: { name: true } } },
  });
  const idle = sandboxes.find((s) => s.pool.name === idlePool);
  browserSandbox ??= sandboxes.find((s) => s.pool.name === browserPool)?.id;
  const idleMem = desktopMemory(idle?.id);
  const browserMem = desktopMemory(browserSandbox);
  if (claimId) await stack.call('DELETE', `/v1/claims/${claimId}`);
  const perGib = (mb) => (mb ? round(1024 / mb, 1) : null);
  return {
    bench: 'first-action-density',
    primed,
    idle_unprimed_rss_mb: idleMem?.rssMb ?? null,
    idle_unprimed_pss_mb: idleMem?.pssMb ?? null,
    browser_on_page_rss_mb: browserMem?.rssMb ?? null,
    browser_on_page_pss_mb: browserMem?.pssMb ?? null,
    idle_unprimed_processes: idleMem?.processes ?? null,
    browser_on_page_processes: browserMem?.processes ?? null,
    desktops_per_gib_idle_unprimed: perGib(idleMem?.pssMb),
    desktops_per_gib_browser_on_page: perGib(browserMem?.pssMb),
    settled_s: SETTLE_MS / 1000,
  };
}

/**
 * desktopMemory sums RSS and PSS over the processes of sandbox `id`'s cgroup (the local backend
 * names it `<scope>-<sandbox id>` under a `cubicle` directory of the worker's memory cgroup).
 */
function desktopMemory(sandboxId) {
  if (!sandboxId) return null;
  const dir = findCgroup(sandboxId);
  if (!dir) return null;
  const pids = readFileSync(join(dir, 'cgroup.procs'), 'utf8').trim().split('\n').filter(Boolean);
  let rssKb = 0;
  let pssKb = 0;
  for (const pid of pids) {
    const rollup = readText(`/proc/${pid}/smaps_rollup`);
    rssKb += Number(/^Rss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0);
    pssKb += Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0);
  }
  return { rssMb: round(rssKb / 1024, 1), pssMb: round(pssKb / 1024, 1), processes: pids.length };
}

function findCgroup(sandboxId) {
  const roots = ['/sys/fs/cgroup/memory', '/sys/fs/cgroup'];
  for (const root of roots) {
    const found = walk(root, 5, (name) => name.endsWith(`-${sandboxId}`));
    if (found) return found;
  }
  return null;
}

function walk(dir, depth, match) {
  if (depth < 0) return null;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return null;
  }
  for (const e of entries) {
    if (!e.isDirectory()) continue;
    if (match(e.name)) return join(dir, e.name);
  }
  for (const e of entries) {
    if (!e.isDirectory()) continue;
    const found = walk(join(dir, e.name), depth - 1, match);
    if (found) return found;
  }
  return null;
}

function readText(path) {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function summary(flows) {
  const p = (key, q) =>
    round(
      percentile(
        flows.map((f) => f[key]).filter((v) => v !== null),
        q,
      ),
    );
  return {
    p50: p('ms', 50),
    p99: p('ms', 99),
    claimP50: p('claimMs', 50),
    observeP50: p('observeMs', 50),
    clickP50: p('clickMs', 50),
    observeGuestP50: p('observeGuestMs', 50),
    clickGuestP50: p('clickGuestMs', 50),
    serverP50: p('serverMs', 50),
    observeHopsP50: hopsP50(flows.map((f) => f.observeHops)),
    clickHopsP50: hopsP50(flows.map((f) => f.clickHops)),
    confirmed: `${flows.filter((f) => f.effect === 'confirmed').length}/${flows.length}`,
  };
}

function goal(name, value, limit) {
  return { goal: name, value, limit, pass: value !== null && value <= limit };
}
