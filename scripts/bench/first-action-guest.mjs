#!/usr/bin/env node
// node scripts/bench/first-action-guest.mjs [--iterations N] [--base <dist dir>] [--gap-ms N]
// The guest's own part of bench:first-action, without the control plane: a fresh Chromium on the
// same file:// page, waited for as a primed pool waits (verify_state until the link exists),
// then observe → click the link by its token, timed by the guest (`duration_ms`) and by the
// client. Each result's evidence is printed with when it arrived (after_ms from the delivery), so
// what the click waited for shows.
//
// A/B on a shared machine: `--base <dir>` names a second build of packages/driver-guest/dist
// (a copy of the old code, e.g. packages/driver-guest/.ab/dist). Both desktops run side by side
// and the iterations alternate between them, so both see the same load. One JSON line per build.
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { log, percentile, round } from './lib/stack.mjs';

const args = process.argv.slice(2);
const opt = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const iterations = Number(opt('--iterations', 8));
const verbose = args.includes('--verbose');
// --sandbox: each desktop in its own bubblewrap sandbox and cgroup (a pool's default: 1 core,
// 2048 MiB), as a pool's desktops run; else plain desktops with a child daemon.
const sandboxed = args.includes('--sandbox');
const agent = new Agent({ keepAlive: true, maxSockets: 1 });
const gapMs = Number(opt('--gap-ms', 1000));
const root = fileURLToPath(new URL('../../', import.meta.url));
const builds = [{ name: 'new', dist: join(root, 'packages/driver-guest/dist') }];
if (opt('--base')) builds.unshift({ name: 'base', dist: resolve(opt('--base')) });

const PAGE = { file: '/usr/share/doc/libxslt1-dev/html/index.html', link: 'Introduction' };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const startLoad = round(loadavg()[0]);
/** Browser profiles, removed at the end (a closed Chromium still writes for a moment). */
const homes = [];
let launches = 0;

for (const b of builds) {
  const { startDesktop } = await import(
    pathToFileURL(join(b.dist, 'desktop/start-desktop.js')).href
  );
  b.session = await startDesktop({ daemon: sandboxed ? 'sandbox' : 'child' });
  b.samples = [];
  log(`${b.name}: desktop ${b.session.display} (${b.dist})`);
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

/** once: a fresh browser on the page, primed; then the measured observe and click. */
async function once(b) {
  // A fresh browser profile each time (a sandbox's /tmp is its own, gone with it).
  const home = sandboxed
    ? `/tmp/cubicle-bench-first-${++launches}`
    : mkdtempSync(join(tmpdir(), 'cubicle-bench-first-'));
  if (!sandboxed) homes.push(home);
  {
    const launched = await call(b.session, '/windows/launch', {
      app: 'browser',
      url: `file://${PAGE.file}`,
      env: { HOME: home },
      wait_for_window_ms: 60_000,
    });
    const windowId = launched.json.window.window_id;
    // As the pool's priming does: sampled again until satisfied (a page still loading answers
    // `unsatisfied` or `unknown`).
    for (let deadline = Date.now() + 60_000; ;) {
      const ready = await call(b.session, '/verify_state', {
        window_id: windowId,
        predicates: [{ kind: 'element_exists', selector: { role: 'link', name: PAGE.link } }],
        timeout_ms: 10_000,
      });
      if (ready.json.status === 'satisfied') break;
      if (Date.now() > deadline) throw new Error(`not primed: ${ready.json.status}`);
      await sleep(200);
    }
    await sleep(gapMs);
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
    await call(b.session, '/windows/close', {
      window_id: windowId,
      force: true,
      timeout_ms: 5_000,
    });
    const r = act.json;
    return {
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
}

try {
  // The floor the figures are read against: the guest's no-op round trip (/healthz), same run.
  for (const b of builds) {
    const trips = [];
    for (let i = 0; i < 30; i += 1)
      trips.push((await call(b.session, '/healthz', undefined, { method: 'GET', prefix: '' })).ms);
    b.floorP50 = round(percentile(trips, 50));
  }
  for (let i = 0; i < iterations; i++) {
    for (const b of i % 2 ? [...builds].reverse() : builds) {
      const s = await once(b);
      b.samples.push(s);
      log(
        `${b.name} ${i + 1}/${iterations}: observe ${s.observeGuestMs} click ${s.clickGuestMs} ms ${s.effect} [${s.evidence.join(' ')}]${verbose ? ` link at ${s.linkFrame} obs [${s.observations.join(' ')}]` : ''}`,
      );
    }
  }
  for (const b of builds) {
    const p50 = (f) => round(percentile(b.samples.map(f), 50));
    process.stdout.write(
      `${JSON.stringify({
        bench: 'first-action-guest',
        build: b.name,
        samples: b.samples.length,
        confirmed: b.samples.filter((s) => s.effect === 'confirmed').length,
        observe_guest_p50_ms: p50((s) => s.observeGuestMs),
        click_guest_p50_ms: p50((s) => s.clickGuestMs),
        click_guest_max_ms: round(Math.max(...b.samples.map((s) => s.clickGuestMs))),
        click_guest_beyond_evidence_p50_ms: p50((s) => s.ownMs),
        click_evidence_p50_ms: p50((s) => s.clickGuestMs - s.ownMs),
        click_round_trip_p50_ms: p50((s) => s.clickTripMs),
        guest_http_floor_p50_ms: b.floorP50,
        loadavg_1m_start: startLoad,
        loadavg_1m: round(loadavg()[0]),
      })}\n`,
    );
  }
} finally {
  for (const b of builds) await b.session?.stop().catch(() => undefined);
  for (const h of homes) rmSync(h, { recursive: true, force: true });
}
