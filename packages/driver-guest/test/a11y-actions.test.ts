/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are read loosely here; the routes validate them against the contract. */
// Observe → act → verify against a real GTK3 app on a real Xvfb desktop with the AT-SPI bus.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  launchGtkApp,
  startA11yHarness,
  type A11yDesktopHarness,
  type GtkApp,
} from './helpers/a11y-desktop.js';

type Row = {
  element_token: string;
  role: string;
  name?: string;
  value?: string;
  states: string[];
  redacted?: true;
};

describe('a11y observe / act / verify on GTK3', () => {
  let h: A11yDesktopHarness;
  let app: GtkApp;
  let other: GtkApp;
  const observe = async (extra: object = {}) => {
    const res = await h.call('/v1/observe', {
      window_id: app.windowId,
      include_screenshot: false,
      ...extra,
    });
    expect(res.status).toBe(200);
    return res.json as {
      snapshot_id: string;
      invalidated_snapshot_ids: string[];
      elements: Row[];
      truncated: any;
      degraded: any;
    };
  };
  const find = (rows: Row[], role: string, name?: string) => {
    const hits = rows.filter((r) => r.role === role && (name === undefined || r.name === name));
    expect(hits.length, `${role} ${name}`).toBeGreaterThan(0);
    return hits;
  };
  const act = async (body: object) => {
    const res = await h.call('/v1/act/element', { window_id: app.windowId, ...body });
    return res;
  };

  beforeAll(async () => {
    h = await startA11yHarness();
    app = await launchGtkApp(h.session, 5, 'A11y Actions');
    other = await launchGtkApp(h.session, 1, 'Other Window');
  });
  afterAll(async () => {
    await app?.stop();
    await other?.stop();
    await h?.stop();
  });

  it('set_value is confirmed by reading the text back, unicode included', async () => {
    const snap = await observe();
    const [memo] = find(snap.elements, 'text', 'Memo');
    for (const value of ['hello from cubicle', 'héllo 世界 🎉 ünïcødé']) {
      const res = await act({ action: 'set_value', element_token: memo!.element_token, value });
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({
        effect: 'confirmed',
        route: 'accessibility',
        retry_safe: false,
      });
      expect(res.json.evidence).toContainEqual(
        expect.objectContaining({ kind: 'value_readback', after: value }),
      );
      await app.waitForLine(new RegExp(`^ENTRY ${value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
    }
    const again = await observe();
    expect(find(again.elements, 'text', 'Memo')[0]!.value).toBe('héllo 世界 🎉 ünïcødé');
  });

  it('type_text inserts unicode at the caret and is confirmed by read-back', async () => {
    const snap = await observe();
    const [memo] = find(snap.elements, 'text', 'Memo');
    await act({ action: 'set_value', element_token: memo!.element_token, value: 'ab' });
    const res = await act({
      action: 'type_text',
      element_token: memo!.element_token,
      text: 'ü→✓ 한글',
    });
    expect(res.json.effect).toBe('confirmed');
    const after = res.json.evidence.find((e: { kind: string }) => e.kind === 'value_readback')
      .after as string;
    expect(after).toContain('ü→✓ 한글');
    expect(after.replace('ü→✓ 한글', '')).toBe('ab');
  });

  it('a click is delivered, and verify_state proves its effect', async () => {
    const snap = await observe();
    const [inc] = find(snap.elements, 'push_button', 'Increment');
    const res = await act({ action: 'click', element_token: inc!.element_token });
    expect(['confirmed', 'unverifiable']).toContain(res.json.effect);
    expect(res.json.retry_safe).toBe(false);
    // The label's text change is an AT-SPI event after delivery, so this click is confirmed.
    expect(res.json.effect).toBe('confirmed');
    expect(res.json.evidence.some((e: { kind: string }) => e.kind === 'a11y_event')).toBe(true);
    await app.waitForLine(/^CLICKED Increment 1$/);
    const verify = await h.call('/v1/verify_state', {
      window_id: app.windowId,
      predicates: [
        { kind: 'element_exists', selector: { role: 'label', name: 'count: 1' } },
        { kind: 'element_absent', selector: { name: 'count: 0' } },
      ],
      stable_samples: 2,
      sample_interval_ms: 20,
    });
    expect(verify.json).toMatchObject({
      status: 'satisfied',
      predicates: [{ status: 'satisfied', match_count: 1 }, { status: 'satisfied' }],
    });
    const no = await h.call('/v1/verify_state', {
      window_id: app.windowId,
      predicates: [{ kind: 'element_exists', selector: { role: 'label', name: 'count: 99' } }],
      timeout_ms: 100,
      sample_interval_ms: 20,
    });
    expect(no.json.status).toBe('unsatisfied');
  });

  it('a checkbox toggle is confirmed by the checked state read back; asking again delivers nothing', async () => {
    const snap = await observe();
    const [check] = find(snap.elements, 'check_box', 'Enable sync');
    const res = await act({ action: 'toggle', element_token: check!.element_token, checked: true });
    expect(res.json.effect).toBe('confirmed');
    expect(res.json.evidence).toContainEqual({
      kind: 'state_readback',
      element_token: check!.element_token,
      state: 'checked',
      before: false,
      after: true,
    });
    await app.waitForLine(/^CHECK 1$/);
    const again = await act({
      action: 'toggle',
      element_token: check!.element_token,
      checked: true,
    });
    expect(again.json).toMatchObject({ effect: 'confirmed', delivery: { delivered_count: 0 } });
    expect(app.lines.filter((l) => l.startsWith('CHECK')).length).toBe(1);
  });

  it('a password value never leaves the driver', async () => {
    const snap = await observe();
    const [pw] = find(snap.elements, 'password_text');
    const res = await act({
      action: 'set_value',
      element_token: pw!.element_token,
      value: 'hunter2',
    });
    expect(res.json.effect).toBe('confirmed');
    expect(res.json.evidence).toContainEqual(
      expect.objectContaining({ kind: 'length_readback', after: 7 }),
    );
    const typed = await act({ action: 'type_text', element_token: pw!.element_token, text: 'xyz' });
    const after = await observe({ query: 'Password' });
    const row = find(after.elements, 'password_text')[0]!;
    expect(row.redacted).toBe(true);
    expect('value' in row).toBe(false);
    const verify = await h.call('/v1/verify_state', {
      window_id: app.windowId,
      predicates: [
        { kind: 'element_exists', selector: { role: 'password_text', value: 'hunter2' } },
      ],
      timeout_ms: 0,
    });
    expect(verify.json).toMatchObject({ status: 'unknown', unknown_reason: 'secure_field' });
    for (const body of [res.json, typed.json, after, verify.json])
      expect(JSON.stringify(body)).not.toMatch(/hunter2|xyz/);
  });

  it('each twin OK token clicks its own twin; after the twins are recreated the old tokens are refused', async () => {
    const snap = await observe();
    const twins = find(snap.elements, 'push_button', 'OK');
    expect(twins).toHaveLength(2);
    const right = await act({ action: 'click', element_token: twins[1]!.element_token });
    expect(res(right).effect).not.toBe('refused');
    await app.waitForLine(/^OK right 1$/);
    const left = await act({ action: 'click', element_token: twins[0]!.element_token });
    expect(res(left).effect).not.toBe('refused');
    await app.waitForLine(/^OK left 1$/);
    expect(app.lines.filter((l) => l.startsWith('OK '))).toEqual(['OK right 1', 'OK left 1']);

    await app.send('recreate-twins');
    for (const twin of twins) {
      const stale = await act({ action: 'click', element_token: twin.element_token });
      expect(stale.json).toMatchObject({
        effect: 'refused',
        retry_safe: true,
        error: { code: 'ambiguous_target' },
      });
      expect(stale.json.delivery).toBeUndefined();
    }
    await new Promise((r) => setTimeout(r, 100));
    expect(app.lines.filter((l) => l.startsWith('OK '))).toEqual(['OK right 1', 'OK left 1']);
    const fresh = find((await observe()).elements, 'push_button', 'OK');
    await act({ action: 'click', element_token: fresh[0]!.element_token });
    await app.waitForLine(/^OK left 2$/);
  });

  it('renamed, removed and invalidated tokens are refused stale with nothing delivered', async () => {
    await app.send('add-button Zed');
    const snap = await observe();
    const [rename] = find(snap.elements, 'push_button', 'Rename me');
    const [zed] = find(snap.elements, 'push_button', 'Zed');
    const first = await act({ action: 'click', element_token: rename!.element_token });
    expect(first.json.effect).not.toBe('refused');
    await app.waitForLine(/^RENAMED$/);
    const second = await act({ action: 'click', element_token: rename!.element_token });
    expect(second.json).toMatchObject({
      effect: 'refused',
      retry_safe: true,
      error: { code: 'stale_element_token' },
    });
    expect(second.json.error.hint).toContain('Renamed');

    await app.send('remove-button Zed');
    const gone = await act({ action: 'click', element_token: zed!.element_token });
    expect(gone.json).toMatchObject({ effect: 'refused', error: { code: 'stale_element_token' } });

    const newer = await observe();
    expect(newer.invalidated_snapshot_ids).toEqual([snap.snapshot_id]);
    const [inc] = find(snap.elements, 'push_button', 'Increment');
    const old = await act({ action: 'click', element_token: inc!.element_token });
    expect(old.json).toMatchObject({ effect: 'refused', error: { code: 'stale_element_token' } });
    await new Promise((r) => setTimeout(r, 100));
    expect(app.lines.filter((l) => l === 'RENAMED' || l.startsWith('CLICKED Zed'))).toEqual([
      'RENAMED',
    ]);
    expect(app.lines.filter((l) => l.startsWith('CLICKED Increment'))).toHaveLength(1);
  });

  it('malformed tokens are 400, unknown windows 404, tokens of another window refused', async () => {
    const bad = await act({ action: 'click', element_token: 'e12' });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('validation_failed');
    const nowin = await h.call('/v1/observe', { window_id: 0x7ffffff0, include_screenshot: false });
    expect(nowin.status).toBe(404);
    expect(nowin.json.error.code).toBe('window_not_found');
    const nowinAct = await h.call('/v1/act/element', {
      window_id: 0x7ffffff0,
      action: 'click',
      element_token: 's000001:0',
    });
    expect(nowinAct.status).toBe(404);
    expect(nowinAct.json.error.code).toBe('window_not_found');
    const snap = await observe();
    const [inc] = find(snap.elements, 'push_button', 'Increment');
    const cross = await h.call('/v1/act/element', {
      window_id: other.windowId,
      action: 'click',
      element_token: inc!.element_token,
    });
    expect(cross.json).toMatchObject({ effect: 'refused', error: { code: 'stale_element_token' } });
    const unsupported = await act({
      action: 'set_value',
      element_token: inc!.element_token,
      value: 'x',
    });
    expect(unsupported.json).toMatchObject({
      effect: 'refused',
      error: { code: 'action_not_supported' },
    });
  });

  it('a truncated observe says so and why', async () => {
    const few = await observe({ max_elements: 3 });
    expect(few.elements).toHaveLength(3);
    expect(few.truncated).toMatchObject({ reasons: ['max_elements'] });
    expect(few.truncated.omitted_count).toBeGreaterThan(0);
    const shallow = await observe({ max_depth: 1 });
    expect(shallow.truncated.reasons).toContain('max_depth');
    expect(Math.max(...shallow.elements.map((e: any) => e.depth))).toBe(1);
    const full = await observe({ max_elements: 10_000 });
    expect(full.truncated).toBe(false);
  });

  it('an observe with a screenshot maps rows into its pixels', async () => {
    const res = await h.call('/v1/observe', { window_id: app.windowId, query: 'Increment' });
    expect(res.json.screenshot).toMatchObject({ window_id: app.windowId, format: 'png' });
    const row = res.json.elements.find((e: Row) => e.name === 'Increment');
    expect(row.screenshot_frame.w).toBeGreaterThan(0);
    expect(res.json.degraded).toBe(false);
  });
});

function res(r: { json: any }) {
  return r.json as { effect: string };
}
