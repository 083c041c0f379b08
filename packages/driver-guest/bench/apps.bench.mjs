// Desktop-app benches through the daemon's routes: `launch` (request → first observable window,
// p50 over cold starts, each with a fresh HOME) for Firefox ESR, LibreOffice Calc and the
// terminal, and `observe` of Firefox on the 2,000-row web fixture and of a Calc sheet (its
// visible cells). Chromium's launch/observe/click are in web.bench.mjs. Goal in the issue: a
// launched browser observable ≤ 3 s; observe figures are compared with Chromium's.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startDesktop } from '../dist/desktop/start-desktop.js';
import { buildGuestApp } from '../dist/server/app.js';
import { servePages } from '../test/fixtures/web-app-page.mjs';
import { percentile } from './stats.mjs';

export const name = 'apps';

const TOKEN = 'bench-token-0123456789abcdef0123456789abcdef';
const LAUNCHES = 3;
const WARMUP = 2;
const RUNS = 10;

/** What "observable" means per app: the first element an agent would act on. */
const APPS = [
  {
    app: 'browser.firefox',
    label: 'firefox',
    isReady: (rows) => rows.some((e) => e.role === 'push_button' && e.name === 'Back'),
  },
  {
    app: 'office.calc',
    label: 'libreoffice-calc',
    isReady: (rows) => rows.some((e) => e.role === 'table_cell'),
  },
  {
    app: 'terminal',
    label: 'terminal',
    isReady: (rows) => rows.some((e) => e.role === 'terminal'),
  },
];

/** stopGroup SIGKILLs a launched app's process group and waits until it is gone. */
async function stopGroup(pgid) {
  const isAlive = () => {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (!isAlive()) return;
  process.kill(-pgid, 'SIGKILL');
  for (let i = 0; i < 200 && isAlive(); i += 1) await sleep(50);
}

export async function run(emit) {
  const pages = await servePages(2000);
  const session = await startDesktop({ daemon: 'none' });
  const app = await buildGuestApp({
    token: TOKEN,
    display: session.display,
    sessionBusAddress: session.dbusAddress,
    childEnv: session.env,
    maxFileBytes: 1 << 20,
    vncPort: () => null,
  });
  const post = async (url, body) => {
    const res = await app.inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${TOKEN}` },
      payload: body,
    });
    if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
    return res.json();
  };
  const running = [];
  /** launchObservable starts an app and returns when observe first shows what isReady wants. */
  const launchObservable = async (spec, url, observeBody = {}) => {
    const home = mkdtempSync(join(tmpdir(), 'cubicle-bench-apps-'));
    const t0 = performance.now();
    const launched = await post('/v1/windows/launch', {
      app: spec.app,
      ...(url ? { url } : {}),
      env: { HOME: home },
      wait_for_window_ms: 60_000,
    });
    running.push({ pid: launched.pid, home });
    if (launched.window_wait !== 'found') throw new Error(`launch: ${launched.window_wait}`);
    const windowId = launched.window.window_id;
    let last = '';
    for (;;) {
      const snap = await post('/v1/observe', {
        window_id: windowId,
        include_screenshot: false,
        max_elements: 10_000,
        ...observeBody,
      }).catch((err) => {
        last = err.message;
        return { elements: [] };
      });
      if (spec.isReady(snap.elements)) {
        return { windowId, pid: launched.pid, home, ms: performance.now() - t0 };
      }
      if (performance.now() - t0 > 90_000)
        throw new Error(`${spec.label} never became observable (last observe: ${last})`);
      await sleep(20);
    }
  };
  const stop = async (launched) => {
    await stopGroup(launched.pid);
    rmSync(launched.home, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
    running.splice(
      running.findIndex((r) => r.pid === launched.pid),
      1,
    );
  };
  const observeP50 = async (label, req, settle) => {
    let snap = await post('/v1/observe', req);
    for (let i = 0; settle && i < 100; i += 1) {
      await sleep(200);
      const next = await post('/v1/observe', req);
      const isSettled = next.elements.length === snap.elements.length && settle(next.elements);
      snap = next;
      if (isSettled) break;
    }
    const samples = [];
    for (let i = 0; i < WARMUP + RUNS; i += 1) {
      const t0 = performance.now();
      snap = await post('/v1/observe', req);
      if (i >= WARMUP) samples.push(performance.now() - t0);
    }
    emit({
      bench: 'observe',
      app: label,
      elements: snap.elements.length,
      truncated: snap.truncated,
      runs: RUNS,
      p50_ms: percentile(samples, 50),
      p95_ms: percentile(samples, 95),
    });
  };
  try {
    for (const spec of APPS) {
      const samples = [];
      // Launch a small page, so the browser's time is measured, not the 2,000 rows'.
      const url = spec.app === 'browser.firefox' ? `${pages.url}second` : undefined;
      for (let i = 0; i < LAUNCHES; i += 1) {
        const l = await launchObservable(spec, url);
        samples.push(l.ms);
        await stop(l);
      }
      emit({
        bench: 'launch',
        app: spec.label,
        runs: LAUNCHES,
        p50_ms: percentile(samples, 50),
        max_ms: Math.round(Math.max(...samples)),
      });
    }

    const ff = await launchObservable(APPS[0], pages.url);
    await observeP50(
      'firefox',
      { window_id: ff.windowId, max_elements: 10_000, include_screenshot: false },
      (rows) => rows.filter((e) => e.name === 'Delete').length >= 2000,
    );
    await stop(ff);

    const calc = await launchObservable(APPS[1]);
    await observeP50('libreoffice-calc', {
      window_id: calc.windowId,
      max_elements: 10_000,
      include_screenshot: false,
    });
    await stop(calc);
  } finally {
    for (const r of [...running]) await stop(r);
    await app.close();
    await session.stop();
    await pages.close();
  }
}
