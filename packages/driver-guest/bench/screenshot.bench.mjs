// Screenshot bench: a 1280x800 display captured through the driver's X protocol path (GetImage
// over the display socket, PNG encode), the whole display and one window, as
// `{"bench":"screenshot",...}` lines. Goal in the issue: 1280x800 p50 <= 60 ms.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { startDesktop } from '../dist/desktop/start-desktop.js';
import { captureScreenshot } from '../dist/screen/capture-screenshot.js';
import { ScreenshotRegistry } from '../dist/screen/screenshot-registry.js';
import { listWindows } from '../dist/windows/list-windows.js';
import { X11Display } from '../dist/windows/x11/x11-display.js';
import { percentile } from './stats.mjs';

export const name = 'screenshot';

const WARMUP = 5;
const RUNS = 40;
const FIXTURE = fileURLToPath(new URL('../test/fixtures/pixel-fixture.py', import.meta.url));

async function measure(fn) {
  for (let i = 0; i < WARMUP; i += 1) await fn();
  const samples = [];
  let bytes = 0;
  for (let i = 0; i < RUNS; i += 1) {
    const t0 = performance.now();
    const shot = await fn();
    samples.push(performance.now() - t0);
    bytes = Math.round((shot.data.length * 3) / 4);
  }
  return { runs: RUNS, p50_ms: percentile(samples, 50), p95_ms: percentile(samples, 95), bytes };
}

export async function run(emit) {
  const session = await startDesktop({ daemon: 'none' });
  const x11 = new X11Display(session.display);
  try {
    // Something to look at: a GTK window, so the PNG is not one flat colour.
    spawn('/usr/bin/python3', [FIXTURE, '/dev/null', 'bench'], {
      env: session.env,
      stdio: 'ignore',
    }).unref();
    let windowId = null;
    for (let i = 0; i < 200 && windowId === null; i += 1) {
      windowId = (await listWindows(x11)).find((w) => w.title === 'bench')?.window_id ?? null;
      if (windowId === null) await sleep(50);
    }
    await sleep(500);
    const deps = { x11, screenshots: new ScreenshotRegistry() };
    emit({
      bench: 'screenshot',
      target: 'display',
      width: 1280,
      height: 800,
      format: 'png',
      ...(await measure(() => captureScreenshot(deps, { format: 'png', max_dimension: 1568 }))),
    });
    emit({
      bench: 'screenshot',
      target: 'display_jpeg',
      width: 1280,
      height: 800,
      format: 'jpeg',
      ...(await measure(() =>
        captureScreenshot(deps, { format: 'jpeg', quality: 80, max_dimension: 1568 }),
      )),
    });
    if (windowId !== null)
      emit({
        bench: 'screenshot',
        target: 'window',
        format: 'png',
        ...(await measure(() =>
          captureScreenshot(deps, { window_id: windowId, format: 'png', max_dimension: 1568 }),
        )),
      });
  } finally {
    await x11.close();
    await session.stop();
  }
}
