/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are read loosely here; the guest routes validate them against the contract. */
// The guest driver on a real browser: Chromium launched by friendly name (`app: "browser"`) on a
// real Xvfb desktop, showing a page served from loopback (form, links, a 2,000-row table with a
// "Delete" button per row, an iframe, a contenteditable). Everything goes through the daemon's
// routes, as a client's calls would.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildGuestApp, startDesktop, type DesktopSession } from '@cubicle/driver-guest';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killGroupAndWait } from '../../packages/driver-guest/test/helpers/launched-app.js';
// @ts-expect-error -- a plain ES module fixture shared with the driver's benches (no types).
import { servePages } from '../../packages/driver-guest/test/fixtures/web-app-page.mjs';

const TOKEN = 'e2e-browser-token-0123456789abcdef0123456789';
type Row = { element_token: string; role: string; name?: string; states: string[] };

// The cases follow what the issue asks (issue 17). A web field has no EditableText, so set_value
// goes through the keyboard focus: asked in the background it is refused with a foreground hint.
describe('the guest driver on Chromium', () => {
  let session: DesktopSession;
  let app: FastifyInstance;
  let pages: { url: string; close(): Promise<void> };
  let home: string;
  let windowId: number;
  let browserPid: number | undefined;
  const post = async (url: string, body: unknown) => {
    const res = await app.inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${TOKEN}` },
      payload: body as object,
    });
    return { status: res.statusCode, json: res.json() as any };
  };
  const observe = async (extra: object = {}) =>
    (await post('/v1/observe', { window_id: windowId, include_screenshot: false, ...extra })).json;
  const act = async (body: object) =>
    (await post('/v1/act/element', { window_id: windowId, ...body })).json;
  const find = (rows: Row[], role: string, name: string) => {
    const row = rows.find((r) => r.role === role && r.name === name);
    expect(row, `${role} "${name}"`).toBeDefined();
    return row!;
  };
  // The whole page, off-screen rows included (the default observe is lean: issue 38).
  const all = () =>
    observe({ max_elements: 10_000, include_hidden: true }).then((s) => s.elements as Row[]);

  beforeAll(async () => {
    pages = await servePages(2000);
    home = mkdtempSync(join(tmpdir(), 'cubicle-e2e-browser-'));
    session = await startDesktop({ daemon: 'none' });
    app = await buildGuestApp({
      token: TOKEN,
      display: session.display,
      sessionBusAddress: session.dbusAddress,
      childEnv: session.env,
      maxFileBytes: 1 << 20,
      vncPort: () => null,
    });
    const launched = await post('/v1/windows/launch', {
      app: 'browser',
      url: pages.url,
      env: { HOME: home },
      wait_for_window_ms: 30_000,
    });
    expect(launched.json.window_wait).toBe('found');
    windowId = launched.json.window.window_id;
    browserPid = launched.json.pid;
    // The page's tree follows the window. Wait for the form's controls only: whether all 2,000
    // rows arrive (the page is still loading meanwhile) is what the first case checks.
    const deadline = Date.now() + 60_000;
    for (;;) {
      const rows = await all().catch(() => [] as Row[]);
      if (rows.some((r) => r.role === 'check_box' && r.name === 'I agree')) break;
      if (Date.now() > deadline) throw new Error("the page's form never became observable");
      await new Promise((r) => setTimeout(r, 300));
    }
  });
  afterAll(async () => {
    // Launch detaches the browser into its own process group, which keeps writing its profile
    // until it is gone: stop and await it before HOME is removed (CI failed on ENOTEMPTY).
    if (browserPid) await killGroupAndWait(browserPid);
    await app?.close();
    await session?.stop();
    await pages?.close();
    if (home) rmSync(home, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  });

  it('observes web roles and names with tokens; a truncated observe says so', async () => {
    const rows = await all();
    find(rows, 'entry', 'Full name');
    find(rows, 'check_box', 'I agree');
    find(rows, 'link', 'Go to the second page');
    expect(rows.filter((r) => r.role === 'push_button' && r.name === 'Delete').length).toBe(2000);
    expect(rows.every((r) => typeof r.element_token === 'string')).toBe(true);
    const small = await observe({ max_elements: 50 });
    expect(small.elements.length).toBeLessThanOrEqual(50);
    expect(small.truncated.reasons).toContain('max_elements');
  });

  it('set_value into a text input and a textarea is confirmed by read-back', async () => {
    const rows = await all();
    for (const [name, value] of [
      ['Full name', 'Ada Lovelace'],
      ['Notes', 'line one — ünïcode 本'],
    ] as const) {
      const element_token = find(rows, 'entry', name).element_token;
      // A web field has no EditableText: only the keyboard focus reaches it, and the driver says so
      // when background is asked for (omitted, the driver picks foreground: issue 38).
      const background = await act({
        action: 'set_value',
        element_token,
        value,
        delivery_mode: 'background',
      });
      expect(background.effect).toBe('refused');
      expect(background.escalation.target).toBe('foreground');
      const res = await act({
        action: 'set_value',
        element_token,
        value,
        delivery_mode: 'foreground',
      });
      expect(res.effect).toBe('confirmed');
      expect(res.evidence).toContainEqual(
        expect.objectContaining({ kind: 'value_readback', after: value }),
      );
    }
    // A second value replaces the first (select-all, then typing over it), never appends.
    const again = await act({
      action: 'set_value',
      element_token: find(rows, 'entry', 'Full name').element_token,
      value: 'Grace Hopper',
      delivery_mode: 'foreground',
    });
    expect(again.effect).toBe('confirmed');
    expect(again.evidence).toContainEqual(
      expect.objectContaining({ before: 'Ada Lovelace', after: 'Grace Hopper' }),
    );
  });

  it('a checkbox click is confirmed by its checked state', async () => {
    const box = find(await all(), 'check_box', 'I agree');
    const res = await act({ action: 'click', element_token: box.element_token });
    expect(res.effect).toBe('confirmed');
    expect(res.evidence).toContainEqual(
      expect.objectContaining({ kind: 'a11y_event', event: 'object:state-changed:checked' }),
    );
  });

  it('twin "Delete" buttons are each clicked through their own token', async () => {
    const deletes = (await all()).filter((r) => r.role === 'push_button' && r.name === 'Delete');
    for (const i of [5, 6]) {
      const res = await act({ action: 'click', element_token: deletes[i]!.element_token });
      expect(res.effect).toBe('confirmed');
      expect((res.evidence as any[]).some((e) => e.name === `deleted row ${i}`)).toBe(true);
    }
  });

  it('scrolls an off-screen row into view by token', async () => {
    const deletes = (await all()).filter((r) => r.role === 'push_button' && r.name === 'Delete');
    const last = deletes[1999]!;
    expect(last.states).not.toContain('showing');
    const res = await act({ action: 'scroll_into_view', element_token: last.element_token });
    expect(res.effect).toBe('confirmed');
  });

  it('a link click is confirmed by the navigation; old tokens are then refused stale', async () => {
    const rows = await all();
    const old = find(rows, 'entry', 'Full name').element_token;
    const res = await act({
      action: 'click',
      element_token: find(rows, 'link', 'Go to the second page').element_token,
    });
    expect(res.effect, JSON.stringify(res)).toBe('confirmed');
    // The proof is the document's: its load completed, or the window took the new title.
    expect(
      (res.evidence as any[]).some(
        (e) =>
          e.event === 'document:load-complete' ||
          (e.role === 'frame' && e.event === 'object:property-change:accessible-name'),
      ),
      JSON.stringify(res.evidence),
    ).toBe(true);
    const after = await act({ action: 'set_value', element_token: old, value: 'x' });
    expect(after.effect).toBe('refused');
    expect(after.error.code).toBe('stale_element_token');
  });
});
