// Accessibility benches through the daemon's HTTP routes (app.inject: validation, contract check
// of the response and JSON included): observe of a whole window without screenshot, element
// click and set_value, on a GTK3 window holding N list buttons, N = 100, 500, 2000.
// Goals in the issue: observe of 2,000 elements p50 <= 150 ms; click p50 <= 15 ms at every size.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { startDesktop } from '../dist/desktop/start-desktop.js';
import { buildGuestApp } from '../dist/server/app.js';
import { listWindows } from '../dist/windows/list-windows.js';
import { X11Display } from '../dist/windows/x11/x11-display.js';
import { percentile } from './stats.mjs';

export const name = 'a11y';

const SIZES = [100, 500, 2000];
const WARMUP = 3;
const RUNS = 30;
const TOKEN = 'bench-token-0123456789abcdef0123456789abcdef';
const APP = fileURLToPath(new URL('../test/fixtures/gtk-test-app.py', import.meta.url));

async function measure(fn) {
  for (let i = 0; i < WARMUP; i += 1) await fn(i);
  const samples = [];
  for (let i = 0; i < RUNS; i += 1) {
    const t0 = performance.now();
    await fn(i);
    samples.push(performance.now() - t0);
  }
  return { runs: RUNS, p50_ms: percentile(samples, 50), p95_ms: percentile(samples, 95) };
}

async function launch(session, x11, n) {
  const title = `a11y bench ${n}`;
  // stdin stays open: the fixture quits when it closes.
  const child = spawn('/usr/bin/python3', [APP, String(n), title], {
    env: session.env,
    stdio: ['pipe', 'ignore', 'ignore'],
    detached: true,
  });
  let windowId = null;
  for (let i = 0; i < 400 && windowId === null; i += 1) {
    windowId = (await listWindows(x11)).find((w) => w.title === title)?.window_id ?? null;
    if (windowId === null) await sleep(50);
  }
  const stop = () => {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  };
  if (windowId === null) {
    stop();
    throw new Error(`no window for ${title}`);
  }
  await sleep(500);
  return { windowId, stop };
}

export async function run(emit) {
  const session = await startDesktop({ daemon: 'none' });
  const x11 = new X11Display(session.display);
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
  try {
    for (const n of SIZES) {
      const gtk = await launch(session, x11, n);
      try {
        const req = { window_id: gtk.windowId, max_elements: 10_000, include_screenshot: false };
        const t0 = performance.now();
        let snap = await post('/v1/observe', req);
        const firstMs = performance.now() - t0;
        const elements = snap.elements.length;
        const observe = await measure(async () => {
          snap = await post('/v1/observe', req);
        });
        emit({ bench: 'observe', elements, ...observe, first_observe_ms: Math.round(firstMs) });
        const item = snap.elements.find((e) => e.name === 'Item 0').element_token;
        const inc = snap.elements.find((e) => e.name === 'Increment').element_token;
        const memo = snap.elements.find((e) => e.name === 'Memo').element_token;
        // A list row's click changes nothing the app exposes (unverifiable); Increment's click
        // relabels the counter (confirmed by its events).
        for (const [target, token] of [
          ['list_row', item],
          ['increment', inc],
        ]) {
          const effects = new Set();
          const click = await measure(async () => {
            const r = await post('/v1/act/element', {
              window_id: gtk.windowId,
              element_token: token,
              action: 'click',
            });
            effects.add(r.effect);
          });
          emit({ bench: 'click', elements, target, ...click, effects: [...effects] });
        }
        const effects = new Set();
        const setValue = await measure(async (i) => {
          const r = await post('/v1/act/element', {
            window_id: gtk.windowId,
            element_token: memo,
            action: 'set_value',
            value: `value ${i}`,
          });
          effects.add(r.effect);
        });
        emit({ bench: 'set_value', elements, ...setValue, effects: [...effects] });
      } finally {
        gtk.stop();
      }
    }
  } finally {
    await app.close();
    await x11.close();
    await session.stop();
  }
}
