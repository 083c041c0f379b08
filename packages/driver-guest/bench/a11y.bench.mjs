// Accessibility benches: observe (whole window, no screenshot), element click and set_value on
// a GTK3 window holding N list buttons, N = 100, 500, 2000, as `{"bench":"observe",...}` lines.
// Goals in the issue: observe of 2,000 elements p50 <= 150 ms; click p50 <= 15 ms at every size.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { A11yDesktop } from '../dist/a11y/a11y-desktop.js';
import { actOnElement } from '../dist/a11y/act-on-element.js';
import { observeWindow } from '../dist/a11y/observe-window.js';
import { startDesktop } from '../dist/desktop/start-desktop.js';
import { listWindows } from '../dist/windows/list-windows.js';
import { X11Display } from '../dist/windows/x11/x11-display.js';
import { percentile } from './stats.mjs';

export const name = 'a11y';

const SIZES = [100, 500, 2000];
const WARMUP = 3;
const RUNS = 30;
const APP = fileURLToPath(new URL('../test/fixtures/gtk-test-app.py', import.meta.url));

async function measure(fn, runs = RUNS) {
  for (let i = 0; i < WARMUP; i += 1) await fn(i);
  const samples = [];
  for (let i = 0; i < runs; i += 1) {
    const t0 = performance.now();
    await fn(i);
    samples.push(performance.now() - t0);
  }
  return { runs, p50_ms: percentile(samples, 50), p95_ms: percentile(samples, 95) };
}

async function launch(session, x11, n) {
  const title = `a11y bench ${n}`;
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
  if (windowId === null) throw new Error(`no window for ${title}`);
  await sleep(500);
  return {
    windowId,
    stop: () => {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    },
  };
}

export async function run(emit) {
  const session = await startDesktop({ daemon: 'none' });
  const x11 = new X11Display(session.display);
  let desktop = null;
  try {
    desktop = await A11yDesktop.connect({
      display: session.display,
      sessionBusAddress: session.dbusAddress,
    });
    for (const n of SIZES) {
      const app = await launch(session, x11, n);
      try {
        const req = {
          window_id: app.windowId,
          max_elements: 10_000,
          max_depth: 64,
          include_screenshot: false,
          max_dimension: 1568,
        };
        const seedStart = performance.now();
        let snap = await observeWindow(desktop, req);
        const firstMs = performance.now() - seedStart;
        const elements = snap.elements.length;
        emit({
          bench: 'observe',
          elements,
          ...(await measure(async () => {
            snap = await observeWindow(desktop, req);
          })),
          first_observe_ms: Math.round(firstMs),
        });
        snap = await observeWindow(desktop, req);
        const item = snap.elements.find((e) => e.name === 'Item 0');
        const memo = snap.elements.find((e) => e.name === 'Memo');
        const effects = new Set();
        const click = await measure(async () => {
          const r = await actOnElement(desktop, {
            window_id: app.windowId,
            element_token: item.element_token,
            action: 'click',
            delivery_mode: 'background',
          });
          effects.add(r.effect);
        });
        emit({ bench: 'click', elements, ...click, effects: [...effects] });
        effects.clear();
        const setValue = await measure(async (i) => {
          const r = await actOnElement(desktop, {
            window_id: app.windowId,
            element_token: memo.element_token,
            action: 'set_value',
            value: `value ${i}`,
            delivery_mode: 'background',
          });
          effects.add(r.effect);
        });
        emit({ bench: 'set_value', elements, ...setValue, effects: [...effects] });
      } finally {
        app.stop();
      }
    }
  } finally {
    desktop?.close();
    await x11.close();
    await session.stop();
  }
}
