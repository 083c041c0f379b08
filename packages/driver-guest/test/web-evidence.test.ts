/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are read loosely here; the route validates them against the contract. */
// "Evidence must belong to the action" on a web page: Chromium (launched as `app: "browser"`)
// shows a page with a CSS animation and a JS clock changing every 100 ms. A button wired to
// nothing is unverifiable; one that changes another element is confirmed by that change.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startA11yHarness, type A11yDesktopHarness } from './helpers/a11y-desktop.js';
import { killGroupAndWait } from './helpers/launched-app.js';

const run = promisify(execFile);
const PAGE = readFileSync(new URL('./fixtures/evidence-page.html', import.meta.url));

type Row = { element_token: string; role: string; name?: string };

describe('action evidence on a web page with animations (Chromium)', () => {
  let h: A11yDesktopHarness;
  let server: Server;
  let home: string;
  let windowId: number;
  let browserPid: number | undefined;
  const observe = async () =>
    (await h.call('/v1/observe', { window_id: windowId, include_screenshot: false })).json
      .elements as Row[];
  const click = async (name: string) => {
    const row = (await observe()).find((r) => r.role === 'push_button' && r.name === name);
    expect(row, `a button named ${name}`).toBeDefined();
    const res = await h.call('/v1/act/element', {
      window_id: windowId,
      action: 'click',
      element_token: row!.element_token,
    });
    expect(res.status).toBe(200);
    return res.json;
  };

  beforeAll(async () => {
    server = createServer((_req, res) => res.setHeader('content-type', 'text/html').end(PAGE));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    home = mkdtempSync(join(tmpdir(), 'cubicle-web-'));
    h = await startA11yHarness();
    const launched = await h.call('/v1/windows/launch', {
      app: 'browser',
      url,
      env: { HOME: home },
      wait_for_window_ms: 30_000,
    });
    expect(launched.json.window_wait).toBe('found');
    windowId = launched.json.window.window_id;
    browserPid = launched.json.pid;
    // The page's tree arrives after the window: wait until its buttons are observable (once
    // over 30 s while another Chromium started on this loaded 2-core machine, 2026-12-01).
    const deadline = Date.now() + 60_000;
    for (;;) {
      const rows = await observe().catch(() => [] as Row[]);
      if (rows.some((r) => r.name === 'Update status')) break;
      if (Date.now() > deadline) throw new Error('the page never became observable');
      await new Promise((r) => setTimeout(r, 250));
    }
  }, 120_000); // the launch wait (30 s) and the observable wait (60 s) above, with room
  afterAll(async () => {
    // The browser runs in its own process group (launch detaches it) and keeps writing its
    // profile until it is gone: stop that group and wait for it before removing the profile.
    if (browserPid) await killGroupAndWait(browserPid);
    await h?.stop();
    server?.close();
    if (home) rmSync(home, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  });

  it('a button wired to nothing is unverifiable, the ticking clock only an observation', async () => {
    const res = await click('Do nothing');
    expect(res.effect, JSON.stringify(res)).toBe('unverifiable');
    expect(res.evidence).toBeUndefined();
  });

  it('a button that changes another element is confirmed by that change', async () => {
    const res = await click('Update status');
    expect(res.effect, JSON.stringify(res)).toBe('confirmed');
    expect(
      (res.evidence as any[]).some(
        (e) => e.kind === 'a11y_event' && /updated 1/.test(e.name ?? ''),
      ),
      JSON.stringify(res),
    ).toBe(true);
    expect((res.evidence as any[]).some((e) => /tick/.test(e.name ?? ''))).toBe(false);
  });

  it('an aria-controls relation ties the changed element to the button', async () => {
    const res = await click('Refresh');
    expect(res.effect, JSON.stringify(res)).toBe('confirmed');
    expect(
      (res.evidence as any[]).some((e) => /updated 2/.test(e.name ?? '')),
      JSON.stringify(res),
    ).toBe(true);
  });

  // About one run in several, an idle click here came back `confirmed` (CI, 2026-12-01). The
  // suspected cause, not reproduced in 90 clicks since: a starved renderer stalls the clock past
  // the 500 ms baseline and its next tick lands in the click's response window. Busy now means
  // "changed on its own in the last 10 s" (action-evidence.ts).
  it('repeated clicks on the idle button stay unverifiable while the page animates', async () => {
    for (let i = 0; i < 5; i += 1) {
      const res = await click('Do nothing');
      expect(res.effect, JSON.stringify(res.evidence)).toBe('unverifiable');
    }
  });

  // A page that renders no frames (here: its window minimized) hands its accessibility changes
  // over only when the renderer is asked something: the clock then changed 5-13 ms after each
  // click and never between them (CI, 2026-12-07: all four cases above failed that way), and a
  // click's own effect came with the next click. The driver asks the page to release what it
  // holds when observing and while waiting for an effect (flush-page.ts). Fails without that:
  // the idle clicks came back `confirmed` by the clock.
  it('on a page that renders no frames (minimized), idle clicks stay unverifiable and a real effect is seen', async () => {
    const env = h.session.env;
    await run('xdotool', ['windowminimize', String(windowId)], { env });
    for (let i = 0; ; i += 1) {
      const { stdout } = await run('xprop', ['-id', String(windowId), 'WM_STATE'], { env });
      if (/Iconic/.test(stdout)) break;
      if (i > 100) throw new Error(`the window did not minimize: ${stdout}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    // Long enough for the clock to tick several times with nothing delivered.
    await new Promise((r) => setTimeout(r, 1_000));
    try {
      for (let i = 0; i < 5; i += 1) {
        const res = await click('Do nothing');
        expect(res.effect, JSON.stringify(res)).toBe('unverifiable');
      }
      const res = await click('Update status');
      expect(res.effect, JSON.stringify(res)).toBe('confirmed');
      expect(
        (res.evidence as any[]).every((e) => !/tick/.test(e.name ?? '')),
        JSON.stringify(res),
      ).toBe(true);
    } finally {
      await run('xdotool', ['windowmap', String(windowId)], { env }).catch(() => undefined);
    }
  });
});
