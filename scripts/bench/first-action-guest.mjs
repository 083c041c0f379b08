#!/usr/bin/env node
// node scripts/bench/first-action-guest.mjs [--iterations N] [--sandbox] [--base <dist dir>]
//   [--build name=<dist dir>[,plain|,sandbox]]... [--gap-ms N | --gaps 1000,15000]
// The guest's own part of bench:first-action, without the control plane: a fresh Chromium on the
// same file:// page, waited for as a primed pool waits (verify_state until the link exists),
// left idle for the gap, then observe → click the link by its token, timed by the guest
// (`duration_ms`) and by the client. Each result's evidence is printed with when it arrived
// (after_ms from the delivery), so what the click waited for shows.
//
// A/B on a shared machine: `--base <dir>` names a second build of packages/driver-guest/dist
// (a copy of the old code, e.g. packages/driver-guest/.ab/dist); `--build` adds any number of
// named builds, each a plain or sandboxed desktop. All desktops run side by side and the
// iterations alternate between them (and between the `--gaps`), so all see the same load. One
// JSON line per build and gap, with what the kernel counted for the desktop over the observe and
// the click: its CPU time, and for a sandbox its cgroup's CFS throttling and page faults.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { log, percentile, round } from './lib/stack.mjs';

const args = process.argv.slice(2);
const opt = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const all = (name) => args.flatMap((a, i) => (a === name ? [args[i + 1]] : []));
const iterations = Number(opt('--iterations', 8));
const verbose = args.includes('--verbose');
// --sandbox: each desktop in its own bubblewrap sandbox and cgroup (a pool's default: 1 core,
// 2048 MiB), as a pool's desktops run; else plain desktops with a child daemon.
const sandboxed = args.includes('--sandbox');
const agent = new Agent({ keepAlive: true, maxSockets: 1 });
/** How long the primed page is left alone before the observe (a warm desktop waits for a claim). */
const gaps = (opt('--gaps') ?? opt('--gap-ms', '1000')).split(',').map(Number);
const root = fileURLToPath(new URL('../../', import.meta.url));
const builds = [];
if (opt('--base')) builds.push({ name: 'base', dist: resolve(opt('--base')), sandboxed });
if (all('--build').length === 0 || opt('--base'))
  builds.push({ name: 'new', dist: join(root, 'packages/driver-guest/dist'), sandboxed });
for (const spec of all('--build')) {
  const [name, rest = ''] = spec.split('=');
  const [dir, kind] = rest.split(',');
  builds.push({
    name,
    dist: resolve(dir || join(root, 'packages/driver-guest/dist')),
    sandboxed: kind ? kind === 'sandbox' : sandboxed,
  });
}

const PAGE = { file: '/usr/share/doc/libxslt1-dev/html/index.html', link: 'Introduction' };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const startLoad = round(loadavg()[0]);
/** Browser profiles, removed at the end (a closed Chromium still writes for a moment). */
const homes = [];
let launches = 0;

/** sandboxCgroupDirs finds sandbox `id`'s cgroup leaves (cpu, cpuacct, memory) under ours. */
function sandboxCgroupDirs(id) {
  const own = new Map(
    readFileSync('/proc/self/cgroup', 'utf8')
      .trim()
      .split('\n')
      .map((line) => line.split(':'))
      .flatMap(([, names, path]) => names.split(',').map((n) => [n, path])),
  );
  const dir = (c) => (own.has(c) ? join('/sys/fs/cgroup', c, own.get(c), 'cubicle', id) : null);
  return { cpu: dir('cpu'), cpuacct: dir('cpuacct'), memory: dir('memory') };
}

const readOr = (file) => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
};
const field = (text, name) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);

/**
 * counters reads what the kernel counted for a desktop so far: the CPU of its processes (a
 * sandbox: its cgroup's cpuacct in ms; a plain desktop: utime + stime per live process and
 * descendant, in clock ticks), and for a sandbox its cgroup's CFS throttling and page faults.
 */
async function counters(b) {
  if (b.cgroup) {
    const cpu = readOr(join(b.cgroup.cpu, 'cpu.stat'));
    const mem = readOr(join(b.cgroup.memory, 'memory.stat'));
    return {
      cpuMs: Number(readOr(join(b.cgroup.cpuacct, 'cpuacct.usage'))) / 1e6,
      throttled: field(cpu, 'nr_throttled'),
      throttledMs: field(cpu, 'throttled_time') / 1e6,
      majfaults: field(mem, 'total_pgmajfault'),
      faults: field(mem, 'total_pgfault'),
    };
  }
  // A plain desktop's list misses what its guest launched (the browser): add every descendant.
  const stats = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readOr(`/proc/${name}/stat`);
    if (stat) stats.set(Number(name), stat.slice(stat.lastIndexOf(')') + 2).split(' '));
  }
  const tree = new Set(await b.session.listProcesses());
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, rest] of stats)
      if (!tree.has(pid) && tree.has(Number(rest[1]))) {
        tree.add(pid);
        grew = true;
      }
  }
  const ticks = new Map();
  for (const pid of tree) {
    const rest = stats.get(pid) ?? [];
    ticks.set(pid, Number(rest[11] ?? 0) + Number(rest[12] ?? 0));
  }
  return { ticks, throttled: NaN, throttledMs: NaN, majfaults: NaN, faults: NaN };
}

/**
 * delta: what the counters grew by. Per process for a plain desktop: a process started in
 * between counts from zero; one that ended in between is left out (its share is lost).
 */
function delta(after, before) {
  const out = {};
  for (const k of Object.keys(after)) if (k !== 'ticks') out[k] = round(after[k] - before[k]);
  if (after.ticks) {
    let ticks = 0;
    for (const [pid, t] of after.ticks) ticks += t - (before.ticks.get(pid) ?? 0);
    out.cpuMs = ticks * 10;
  }
  return out;
}

for (const b of builds) {
  const { startDesktop } = await import(
    pathToFileURL(join(b.dist, 'desktop/start-desktop.js')).href
  );
  b.session = await startDesktop({ daemon: b.sandboxed ? 'sandbox' : 'child' });
  b.samples = [];
  b.cgroup = b.sandboxed ? sandboxCgroupDirs(b.session.id) : null;
  log(`${b.name}: ${b.sandboxed ? 'sandboxed' : 'plain'} desktop ${b.session.display} (${b.dist})`);
}

/** call POSTs to a desktop's guest (TCP, or the unix socket of a sandboxed one); GET for the floor. */
async function call(session, path, body, { method = 'POST', prefix = '/v1' } = {}) {
  const started = performance.now();
  const url = session.guestUrl;
  const target = url.startsWith('http+unix://')
    ? { socketPath: decodeURIComponent(url.slice('http+unix://'.length)) }
    : { host: new URL(url).hostname, port: new URL(url).port };
  const payload = body === undefined ? '' : JSON.stringify(body);
  const { status, text } = await new Promise((resolve, reject) => {
    const req = request(
      {
        ...target,
        agent,
        method,
        path: `${prefix}${path}`,
        headers: {
          authorization: `Bearer ${session.guestToken}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode, text }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
  const json = JSON.parse(text);
  if (status !== 200) throw new Error(`${path}: ${status} ${text.slice(0, 300)}`);
  return { json, ms: performance.now() - started };
}

/**
 * prime: a fresh browser on the page, waited for as a pool's priming waits; its window id. A
 * browser whose page is not ready within a minute is closed and launched again (at most 3 times;
 * each retry is logged): on a loaded machine a launch now and then never shows its link.
 */
async function prime(b) {
  for (let attempt = 1; ; attempt += 1) {
    // A fresh browser profile each time (a sandbox's /tmp is its own, gone with it).
    const home = b.sandboxed
      ? `/tmp/cubicle-bench-first-${++launches}`
      : mkdtempSync(join(tmpdir(), 'cubicle-bench-first-'));
    if (!b.sandboxed) homes.push(home);
    const launched = await call(b.session, '/windows/launch', {
      app: 'browser',
      url: `file://${PAGE.file}`,
      env: { HOME: home },
      wait_for_window_ms: 60_000,
    });
    const windowId = launched.json.window.window_id;
    // As the pool's priming does: sampled again until satisfied (a page still loading answers
    // `unsatisfied` or `unknown`).
    let status;
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(200)) {
      const ready = await call(b.session, '/verify_state', {
        window_id: windowId,
        predicates: [{ kind: 'element_exists', selector: { role: 'link', name: PAGE.link } }],
        timeout_ms: 10_000,
      });
      status = ready.json.status;
      if (status === 'satisfied') return windowId;
    }
    await call(b.session, '/windows/close', {
      window_id: windowId,
      force: true,
      timeout_ms: 5_000,
    });
    if (attempt === 3) throw new Error(`${b.name} not primed: ${status}`);
    log(`${b.name}: not primed in 60 s (${status}), launching again`);
  }
}

/** measure: the timed observe and click on a primed window, then the window closed. */
async function measure(b, windowId, gapMs) {
  const before = await counters(b);
  const seen = await call(b.session, '/observe', {
    window_id: windowId,
    include_screenshot: false,
  });
  const link = seen.json.elements.find((e) => e.role === 'link' && e.name === PAGE.link);
  const act = await call(b.session, '/act/element', {
    window_id: windowId,
    element_token: link.element_token,
    action: 'click',
  });
  const kernel = delta(await counters(b), before);
  await call(b.session, '/windows/close', {
    window_id: windowId,
    force: true,
    timeout_ms: 5_000,
  });
  const r = act.json;
  return {
    gapMs,
    kernel,
    observeTripMs: seen.ms,
    observeGuestMs: seen.json.duration_ms,
    clickGuestMs: r.duration_ms,
    clickTripMs: act.ms,
    effect: r.effect,
    linkFrame: link.frame
      ? `${link.frame.x},${link.frame.y} ${link.frame.w}x${link.frame.h}`
      : 'none',
    // The guest's own share: everything but the wait from the delivery to the first evidence
    // (the token's resolution before it, the look that finds it after).
    ownMs: r.duration_ms - (r.evidence?.[0]?.after_ms ?? Number.NaN),
    evidence: (r.evidence ?? []).map((e) => `${e.event ?? e.kind}@${round(e.after_ms ?? -1)}`),
    observations: (r.observations ?? []).map(
      (e) => `${e.event ?? e.kind}:${e.role ?? ''}@${round(e.after_ms ?? -1)}`,
    ),
  };
}

try {
  // The floor the figures are read against: the guest's no-op round trip (/healthz), same run.
  for (const b of builds) {
    const trips = [];
    for (let i = 0; i < 30; i += 1)
      trips.push((await call(b.session, '/healthz', undefined, { method: 'GET', prefix: '' })).ms);
    b.floorP50 = round(percentile(trips, 50));
  }
  // Each iteration primes one window per build, then measures each when its own gap has passed
  // since its priming (the builds idle side by side); order and gap alternate.
  for (let i = 0; i < iterations; i++) {
    const gapMs = gaps[i % gaps.length];
    const primed = [];
    for (const b of i % 2 ? [...builds].reverse() : builds)
      primed.push({ b, windowId: await prime(b), at: performance.now() });
    for (const { b, windowId, at } of primed) {
      await sleep(Math.max(0, at + gapMs - performance.now()));
      const s = await measure(b, windowId, gapMs);
      b.samples.push(s);
      const k = s.kernel;
      log(
        `${b.name} ${i + 1}/${iterations} gap ${gapMs}: observe ${s.observeGuestMs} click ${s.clickGuestMs} ms ${s.effect} [${s.evidence.join(' ')}] cpu ${k.cpuMs} ms throttled ${k.throttled}x ${k.throttledMs} ms faults ${k.faults} (major ${k.majfaults}) load ${round(loadavg()[0])}${verbose ? ` link at ${s.linkFrame} obs [${s.observations.join(' ')}]` : ''}`,
      );
    }
  }
  for (const b of builds) {
    for (const gapMs of new Set(gaps)) {
      const samples = b.samples.filter((s) => s.gapMs === gapMs);
      const p50 = (f) => round(percentile(samples.map(f), 50));
      const sum = (f) => round(samples.reduce((t, s) => t + f(s), 0));
      process.stdout.write(
        `${JSON.stringify({
          bench: 'first-action-guest',
          build: b.name,
          sandboxed: b.sandboxed,
          gap_ms: gapMs,
          samples: samples.length,
          confirmed: samples.filter((s) => s.effect === 'confirmed').length,
          observe_guest_p50_ms: p50((s) => s.observeGuestMs),
          observe_round_trip_p50_ms: p50((s) => s.observeTripMs),
          click_guest_p50_ms: p50((s) => s.clickGuestMs),
          click_guest_max_ms: round(Math.max(...samples.map((s) => s.clickGuestMs))),
          click_guest_beyond_evidence_p50_ms: p50((s) => s.ownMs),
          click_evidence_p50_ms: p50((s) => s.clickGuestMs - s.ownMs),
          click_round_trip_p50_ms: p50((s) => s.clickTripMs),
          // Over the observe and the click, what the kernel counted for the whole desktop.
          desktop_cpu_p50_ms: p50((s) => s.kernel.cpuMs),
          cfs_throttled_periods: sum((s) => s.kernel.throttled),
          cfs_throttled_ms: sum((s) => s.kernel.throttledMs),
          page_faults_p50: p50((s) => s.kernel.faults),
          major_faults: sum((s) => s.kernel.majfaults),
          guest_http_floor_p50_ms: b.floorP50,
          loadavg_1m_start: startLoad,
          loadavg_1m: round(loadavg()[0]),
        })}\n`,
      );
    }
  }
} finally {
  for (const b of builds) await b.session?.stop().catch(() => undefined);
  for (const h of homes) rmSync(h, { recursive: true, force: true });
}
