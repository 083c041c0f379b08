/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are read loosely here; the routes validate them against the contract. */
// A desktop app launched through `/v1/windows/launch {app}` with its own throwaway HOME, and the
// teardown every such test needs: the app runs in its own process group (launch detaches it)
// and keeps writing its profile until it is gone, so the group is stopped and awaited before the
// HOME is removed (CI once failed on ENOTEMPTY while Chromium still wrote its profile).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { A11yDesktopHarness } from './a11y-desktop.js';

export type Row = {
  element_token: string;
  role: string;
  name?: string;
  value?: string;
  states?: string[];
};

export interface LaunchedApp {
  pid: number;
  windowId: number;
  home: string;
  /** durationMs is the driver's own launch → first window time. */
  durationMs: number;
  stop(): Promise<void>;
}

/** launchApp launches a friendly-named app with a fresh HOME and waits for its window. */
export async function launchApp(
  h: A11yDesktopHarness,
  app: string,
  extra: { url?: string } = {},
): Promise<LaunchedApp> {
  const home = mkdtempSync(join(tmpdir(), 'cubicle-app-'));
  const res = await h.call('/v1/windows/launch', {
    app,
    ...extra,
    env: { HOME: home },
    wait_for_window_ms: 45_000,
  });
  const pid: number | undefined = res.json.pid;
  const stop = async () => {
    if (pid) await killGroupAndWait(pid);
    rmSync(home, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  };
  if (res.status !== 200 || res.json.window_wait !== 'found') {
    await stop();
    throw new Error(`launch ${app}: ${res.status} ${JSON.stringify(res.json)}`);
  }
  return {
    pid: pid as number,
    windowId: res.json.window.window_id,
    home,
    durationMs: res.json.duration_ms,
    stop,
  };
}

/** killGroupAndWait SIGKILLs a process group and waits (bounded) until none of it is left. */
export async function killGroupAndWait(pgid: number, ms = 10_000): Promise<void> {
  const alive = () => {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (!alive()) return;
  process.kill(-pgid, 'SIGKILL');
  const deadline = Date.now() + ms;
  while (alive() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}

/** observeUntil re-observes until `match` finds a row (apps fill their tree after mapping). */
export async function observeUntil(
  h: A11yDesktopHarness,
  windowId: number,
  match: (r: Row) => boolean,
  body: Record<string, unknown> = {},
  ms = 30_000,
): Promise<{ row: Row; rows: Row[] }> {
  const deadline = Date.now() + ms;
  let last = '';
  for (;;) {
    const res = await h.call('/v1/observe', {
      window_id: windowId,
      include_screenshot: false,
      ...body,
    });
    const rows = (res.json.elements ?? []) as Row[];
    const row = rows.find(match);
    if (row) return { row, rows };
    last = `${res.status} ${rows.length} rows ${JSON.stringify(res.json.degraded ?? res.json.error ?? '')}`;
    if (Date.now() > deadline) throw new Error(`no matching element: last observe ${last}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}
