// Defaults that work on the web (issue 38): typing into a Chromium or Firefox form field by token with no
// options succeeds (the driver picks foreground for a field only the keyboard focus reaches and
// says so in `delivery`), an explicit background request is still refused, and a token from a
// page the browser has navigated away from is refused in milliseconds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startA11yHarness, type A11yDesktopHarness } from './helpers/a11y-desktop.js';
import { launchApp, observeUntil, type LaunchedApp, type Row } from './helpers/launched-app.js';
// @ts-expect-error -- a plain ES module fixture shared with the benches (no types).
import { servePages } from './fixtures/web-app-page.mjs';

describe('element actions on a Chromium form with default options', () => {
  let h: A11yDesktopHarness;
  let pages: { url: string; close(): Promise<void> };
  let chromium: LaunchedApp | undefined;
  let windowId: number;
  const observe = async () =>
    (await h.call('/v1/observe', { window_id: windowId, include_screenshot: false })).json
      .elements as Row[];
  const field = async (name: string) => {
    const row = (await observe()).find((r) => r.role === 'entry' && r.name === name);
    expect(row, `a field named ${name}`).toBeDefined();
    return row!.element_token;
  };
  const act = async (body: Record<string, unknown>) => {
    const res = await h.call('/v1/act/element', { window_id: windowId, ...body });
    expect(res.status).toBe(200);
    return res.json;
  };

  beforeAll(async () => {
    pages = await servePages(2000);
    h = await startA11yHarness();
    chromium = await launchApp(h, 'browser', { url: pages.url });
    windowId = chromium.windowId;
    // The page's tree arrives after the window (see web-evidence.test.ts).
    await observeUntil(
      h,
      windowId,
      (r) => r.role === 'entry' && r.name === 'Full name',
      {},
      60_000,
    );
  }, 120_000);
  afterAll(async () => {
    await chromium?.stop();
    await h?.stop();
    await pages?.close();
  });

  it('set_value with no options is confirmed by read-back, delivered in the foreground', async () => {
    const token = await field('Full name');
    const t0 = performance.now();
    const res = await act({ action: 'set_value', element_token: token, value: 'Ada Lovelace' });
    console.log(`set_value default: ${(performance.now() - t0).toFixed(1)} ms`);
    expect(res.effect, JSON.stringify(res)).toBe('confirmed');
    expect(res.evidence).toContainEqual(
      expect.objectContaining({ kind: 'value_readback', after: 'Ada Lovelace' }),
    );
    expect(res.delivery).toMatchObject({ mode: 'foreground', auto_selected: true });
    expect(res.route).toBe('xtest');
  });

  it('type_text with no options is confirmed by read-back, delivered in the foreground', async () => {
    const token = await field('Notes');
    // Doubled letters and keys off the keymap: Chromium takes its keys unpaced (keyGapMs), and
    // neither may be lost or merged.
    const text = 'typed by token: book, ünïcode 本';
    const t0 = performance.now();
    const res = await act({ action: 'type_text', element_token: token, text });
    console.log(`type_text default: ${(performance.now() - t0).toFixed(1)} ms`);
    expect(res.effect, JSON.stringify(res)).toBe('confirmed');
    expect(res.evidence).toContainEqual(
      expect.objectContaining({ kind: 'value_readback', after: text }),
    );
    expect(res.delivery).toMatchObject({ mode: 'foreground', auto_selected: true });
  });

  it('an explicit background request is honoured: refused, nothing delivered', async () => {
    const token = await field('Full name');
    for (const body of [
      { action: 'set_value', value: 'never' },
      { action: 'type_text', text: 'never' },
    ]) {
      const res = await act({ ...body, element_token: token, delivery_mode: 'background' });
      expect(res.effect, JSON.stringify(res)).toBe('refused');
      expect(res.error.code).toBe('action_not_supported');
      expect(res.escalation.target).toBe('foreground');
      expect(res.delivery).toBeUndefined();
    }
    const after = (await observe()).find((r) => r.role === 'entry' && r.name === 'Full name');
    expect(JSON.stringify(after)).not.toContain('never');
  });

  // How fast is bench:observe's `stale_token` figure (goal ≤ 10 ms, issue 38), not a timed
  // assertion here: right after the 2,000-row page loads, this 2-core machine under load took
  // 175–316 ms for a refusal whose own check takes < 0.1 ms. (Before the fast path: 1.2–1.6 s,
  // the refusal re-read the new document whole to count look-alikes of the element.)
  it('a token from before a navigation is refused stale', async () => {
    const refuseStale = async (token: string) => {
      const times: number[] = [];
      for (const body of [
        { action: 'set_value', value: 'x' },
        { action: 'type_text', text: 'x' },
        { action: 'click' },
      ]) {
        const t0 = performance.now();
        const res = await act({ ...body, element_token: token });
        times.push(performance.now() - t0);
        expect(res.effect, JSON.stringify(res)).toBe('refused');
        expect(res.error.code).toBe('stale_element_token');
      }
      return times;
    };
    const clickLink = async (rows: Row[], name: string) => {
      const link = rows.find((r) => r.role === 'link' && r.name === name);
      expect(link, `a link named ${name}`).toBeDefined();
      const clicked = await act({ action: 'click', element_token: link!.element_token });
      expect(clicked.effect, JSON.stringify(clicked)).toBe('confirmed');
    };
    // To the small second page, then back to the large form page (a 2,000-row table).
    const main = await observe();
    const fromMain = main.find((r) => r.role === 'entry' && r.name === 'Full name')!.element_token;
    await clickLink(main, 'Go to the second page');
    const toSmall = await refuseStale(fromMain);
    const second = await observe();
    const fromSecond = second.find((r) => r.role === 'link' && r.name === 'Back')!.element_token;
    await clickLink(second, 'Back');
    const toLarge = await refuseStale(fromSecond);
    // Once the new page has settled the browser reports it; an old refusal then read it whole.
    await new Promise((r) => setTimeout(r, 1_000));
    toLarge.push(...(await refuseStale(fromSecond)));
    const ms = (t: number[]) => t.map((x) => x.toFixed(1)).join(', ');
    console.log(
      `stale token refused in ${ms(toSmall)} ms (new page small), ${ms(toLarge)} ms (new page 2,000 rows)`,
    );
  });
});

// Firefox ESR offers EditableText on a page's fields, answers success and changes nothing
// (suspected_noop after 2 s): with no options the driver types through the focus instead.
describe('element actions on a Firefox form with default options', () => {
  let h: A11yDesktopHarness;
  let pages: { url: string; close(): Promise<void> };
  let ff: LaunchedApp | undefined;
  const observe = async () =>
    (await h.call('/v1/observe', { window_id: ff!.windowId, include_screenshot: false })).json
      .elements as Row[];
  const act = async (body: Record<string, unknown>) =>
    (await h.call('/v1/act/element', { window_id: ff!.windowId, ...body })).json;
  const field = async (name: string) =>
    (await observe()).find((r) => r.role === 'entry' && r.name === name)!.element_token;

  beforeAll(async () => {
    pages = await servePages(20);
    h = await startA11yHarness();
    ff = await launchApp(h, 'browser.firefox', { url: pages.url });
    await observeUntil(h, ff.windowId, (r) => r.role === 'entry' && r.name === 'Notes');
  }, 120_000);
  afterAll(async () => {
    await ff?.stop();
    await h?.stop();
    await pages?.close();
  });

  it('set_value and type_text with no options are confirmed by read-back', async () => {
    const set = await act({
      action: 'set_value',
      element_token: await field('Full name'),
      value: 'Ada Lovelace',
    });
    expect(set.effect, JSON.stringify(set)).toBe('confirmed');
    expect(set.evidence).toContainEqual(
      expect.objectContaining({ kind: 'value_readback', after: 'Ada Lovelace' }),
    );
    expect(set.delivery).toMatchObject({ mode: 'foreground', auto_selected: true });
    const typed = await act({
      action: 'type_text',
      element_token: await field('Notes'),
      text: 'typed by token',
    });
    expect(typed.effect, JSON.stringify(typed)).toBe('confirmed');
    expect(typed.evidence).toContainEqual(
      expect.objectContaining({ kind: 'value_readback', after: 'typed by token' }),
    );
    expect(typed.delivery).toMatchObject({ mode: 'foreground', auto_selected: true });
    console.log(
      `Firefox default: set_value ${set.duration_ms.toFixed(1)} ms, type_text ${typed.duration_ms.toFixed(1)} ms (guest)`,
    );
  });
});
