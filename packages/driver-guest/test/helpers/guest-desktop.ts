// Builds the guest app on a real desktop session (startDesktop, no daemon of its own) for the
// screen/windows/input/recording suites, and launches the pixel fixture through the app itself
// (windows.launch), as a client would.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WindowInfo } from '@cubicle/contract/guest';
import type { FastifyInstance } from 'fastify';
import { startDesktop, type DesktopSession } from '../../src/desktop/start-desktop.js';
import { buildGuestApp } from '../../src/server/app.js';

export const TOKEN = 'test-token-0123456789abcdef0123456789abcdef';
export const FIXTURE = fileURLToPath(new URL('../fixtures/pixel-fixture.py', import.meta.url));

export interface GuestDesktop {
  desktop: DesktopSession;
  app: FastifyInstance;
  tmp: string;
  call(
    method: 'GET' | 'POST',
    url: string,
    body?: unknown,
    // Tests parse bodies with the contract's schemas or read single fields of error envelopes.
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
  ): Promise<{ status: number; json: any; raw: Buffer }>;
  /** launchFixture starts the fixture, waits for its window and returns it with its log path. */
  launchFixture(
    title: string,
    options?: { sticky?: boolean },
  ): Promise<{
    window: WindowInfo;
    pid: number;
    log: string;
    /** Widget rectangles in window (= full-size screenshot) pixels, as the fixture logged them. */
    widgets: Record<string, { x: number; y: number; w: number; h: number }>;
    /** readLog is what the app received: "ready", then one line per event. */
    readLog(): string[];
    /**
     * logOf waits (up to 5 s) until the app has logged at least `lines` lines and returns the log:
     * the app handles input from its event queue, after the driver has answered.
     */
    logOf(lines: number): Promise<string[]>;
  }>;
  stop(): Promise<void>;
}

export async function startGuestDesktop(): Promise<GuestDesktop> {
  const desktop = await startDesktop({ daemon: 'none' });
  const tmp = mkdtempSync(join(tmpdir(), 'guest-screen-'));
  const pids: number[] = [];
  const app = await buildGuestApp({
    token: TOKEN,
    display: desktop.display,
    sessionBusAddress: desktop.dbusAddress,
    childEnv: desktop.env,
    maxFileBytes: 1 << 20,
    vncPort: () => null,
  });
  const call: GuestDesktop['call'] = async (method, url, body) => {
    const res = await app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${TOKEN}` },
      ...(body !== undefined ? { payload: body as object } : {}),
    });
    const raw = res.rawPayload;
    const json = res.headers['content-type']?.toString().includes('json') ? res.json() : null;
    return { status: res.statusCode, json, raw };
  };
  return {
    desktop,
    app,
    tmp,
    call,
    async launchFixture(title, options = {}) {
      const log = join(tmp, `${title}.log`);
      const res = await call('POST', '/v1/windows/launch', {
        argv: ['/usr/bin/python3', FIXTURE, log, title, ...(options.sticky ? ['sticky'] : [])],
        wait_for_window_ms: 20_000,
      });
      if (res.status !== 200 || res.json.window_wait !== 'found')
        throw new Error(`fixture did not start: ${JSON.stringify(res.json)}`);
      pids.push(res.json.pid);
      const lines = () => readFileSync(log, 'utf8').replace(/\n$/, '').split('\n');
      const readLog = () => lines().filter((l) => !l.startsWith('alloc '));
      // The fixture logs "ready" once it has drawn and measured its widgets.
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline) {
        try {
          if (readLog().includes('ready')) break;
        } catch {
          /* not written yet */
        }
        await new Promise((r) => setTimeout(r, 25));
      }
      const widgets: Record<string, { x: number; y: number; w: number; h: number }> = {};
      for (const line of lines()) {
        const m = /^alloc (\w+) (-?\d+) (-?\d+) (\d+) (\d+)$/.exec(line);
        if (m) widgets[m[1]!] = { x: +m[2]!, y: +m[3]!, w: +m[4]!, h: +m[5]! };
      }
      const logOf = async (count: number) => {
        const until = Date.now() + 5_000;
        while (readLog().length < count && Date.now() < until)
          await new Promise((r) => setTimeout(r, 25));
        return readLog();
      };
      return { window: res.json.window, pid: res.json.pid, log, widgets, readLog, logOf };
    },
    async stop() {
      await app.close();
      for (const pid of pids) {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
      await desktop.stop();
      rmSync(tmp, { recursive: true, force: true });
    },
  };
}
