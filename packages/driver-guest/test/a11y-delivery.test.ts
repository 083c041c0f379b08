// Delivery modes and the less common element actions, against the GTK3 fixture.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildGuestApp } from '../src/server/app.js';
import {
  launchGtkApp,
  startA11yHarness,
  TOKEN,
  type A11yDesktopHarness,
  type GtkApp,
} from './helpers/a11y-desktop.js';

const run = promisify(execFile);

type Row = { element_token: string; role: string; name?: string; states: string[] };

describe('a11y delivery and other actions', () => {
  let h: A11yDesktopHarness;
  let app: GtkApp;
  // The whole tree: these cases act on rows a lean observe leaves out (a list's rows below the
  // fold, a button added a moment ago that GTK has not yet marked showing).
  const observe = async () =>
    (
      await h.call('/v1/observe', {
        window_id: app.windowId,
        include_screenshot: false,
        include_hidden: true,
      })
    ).json.elements as Row[];
  const token = (rows: Row[], name: string) => rows.find((r) => r.name === name)!.element_token;
  const act = (body: object) => h.call('/v1/act/element', { window_id: app.windowId, ...body });

  beforeAll(async () => {
    h = await startA11yHarness();
    app = await launchGtkApp(h.session, 60, 'Delivery App');
  });
  afterAll(async () => {
    await app?.stop();
    await h?.stop();
  });

  it('foreground click goes through XTest at the element and says the pointer moved', async () => {
    const res = await act({
      action: 'click',
      element_token: token(await observe(), 'Increment'),
      delivery_mode: 'foreground',
    });
    expect(res.json).toMatchObject({
      route: 'xtest',
      delivery: { mode: 'foreground', pointer_moved: true },
    });
    await app.waitForLine(/^CLICKED Increment 1$/);
  });

  it('foreground type_text types through XTest into the element, unicode included', async () => {
    const memo = token(await observe(), 'Memo');
    await act({ action: 'set_value', element_token: memo, value: '' });
    const res = await act({
      action: 'type_text',
      element_token: memo,
      text: 'Grüße 42',
      delivery_mode: 'foreground',
    });
    expect(res.json).toMatchObject({
      effect: 'confirmed',
      route: 'xtest',
      delivery: { mode: 'foreground' },
    });
    expect(res.json.evidence).toContainEqual(
      expect.objectContaining({ kind: 'value_readback', after: 'Grüße 42' }),
    );
  });

  it('select picks a row through its parent Selection, confirmed by the selected state', async () => {
    const rows = await observe();
    const banana = rows.find((r) => r.name === 'Banana')!;
    const res = await act({ action: 'select', element_token: banana.element_token });
    expect(res.json).toMatchObject({ effect: 'confirmed', route: 'accessibility' });
    expect(res.json.evidence).toContainEqual({
      kind: 'state_readback',
      element_token: banana.element_token,
      state: 'selected',
      before: false,
      after: true,
    });
    await app.waitForLine(/^SELECTED Banana$/);
  });

  it('an insensitive element is refused element_disabled with nothing delivered', async () => {
    await app.send('add-button Locked');
    await app.send('sensitive Locked off');
    const res = await act({ action: 'click', element_token: token(await observe(), 'Locked') });
    expect(res.json).toMatchObject({
      effect: 'refused',
      retry_safe: true,
      error: { code: 'element_disabled' },
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(app.lines).not.toContain('CLICKED Locked');
  });

  it('scroll_into_view on a list row below the fold', async () => {
    const rows = await observe();
    const last = rows.find((r) => r.name === 'Item 59')!;
    expect(last.states).not.toContain('showing');
    const res = await act({ action: 'scroll_into_view', element_token: last.element_token });
    expect(res.json).toMatchObject({
      effect: 'confirmed',
      route: 'accessibility',
      delivery: { mode: 'background' },
    });
    expect(res.json.evidence).toContainEqual({
      kind: 'state_readback',
      element_token: last.element_token,
      state: 'showing',
      before: false,
      after: true,
    });
    const again = await act({ action: 'scroll_into_view', element_token: last.element_token });
    expect(again.json).toMatchObject({ effect: 'confirmed', delivery: { delivered_count: 0 } });
  });

  it('focus is confirmed by the focused state read back in an active window', async () => {
    // GTK reports `focused` only inside the active window; activating it is test setup.
    await run('xdotool', ['windowactivate', '--sync', String(app.windowId)], {
      env: h.session.env,
    });
    const rename = token(await observe(), 'Rename me');
    const res = await act({ action: 'focus', element_token: rename });
    expect(res.json.effect).toBe('confirmed');
    expect(res.json.evidence).toContainEqual({
      kind: 'state_readback',
      element_token: rename,
      state: 'focused',
      before: false,
      after: true,
    });
  });

  it('without an accessibility bus, observe says it cannot see rather than that nothing is there', async () => {
    const blind = await buildGuestApp({
      token: TOKEN,
      display: h.session.display,
      sessionBusAddress: 'unix:path=/nonexistent/cubicle-bus',
      childEnv: h.session.env,
      maxFileBytes: 1 << 20,
      vncPort: () => null,
    });
    try {
      const res = await blind.inject({
        method: 'POST',
        url: '/v1/observe',
        headers: { authorization: `Bearer ${TOKEN}` },
        payload: { window_id: app.windowId, include_screenshot: false },
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({
        elements: [],
        degraded: { reasons: ['a11y_bus_unavailable'] },
        window: { title: 'Delivery App' },
      });
    } finally {
      await blind.close();
    }
  });

  it('a recording of element actions keeps text but never a password', async () => {
    const rows = await observe();
    const memo = token(rows, 'Memo');
    const pw = rows.find((r) => r.role === 'password_text')!.element_token;
    expect((await h.call('/v1/recording/start', { screenshots: false })).status).toBe(200);
    await act({ action: 'set_value', element_token: memo, value: 'recorded memo text' });
    await act({ action: 'set_value', element_token: pw, value: 'sw0rdfish-secret' });
    await act({ action: 'type_text', element_token: pw, text: 'more-secret' });
    expect((await h.call('/v1/recording/stop', {})).status).toBe(200);
    const archive = await h.app.inject({
      method: 'GET',
      url: '/v1/recording/archive',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(archive.statusCode).toBe(200);
    const tar = gunzipSync(archive.rawPayload).toString('utf8');
    expect(tar).toContain('recorded memo text');
    expect(tar).toContain('"redacted":["value"]');
    expect(tar).not.toMatch(/sw0rdfish|more-secret/);
  });

  it('verify_state checks the window title', async () => {
    const res = await h.call('/v1/verify_state', {
      window_id: app.windowId,
      predicates: [
        { kind: 'window_title', match: { mode: 'equals', title: 'Delivery App' } },
        { kind: 'window_title', match: { mode: 'contains', title: 'Nope' } },
      ],
      timeout_ms: 0,
    });
    expect(res.json).toMatchObject({
      status: 'unsatisfied',
      predicates: [
        { status: 'satisfied', observed_title: 'Delivery App' },
        { status: 'unsatisfied' },
      ],
    });
  });
});
