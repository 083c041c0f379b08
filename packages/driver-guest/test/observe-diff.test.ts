/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are read loosely here; the routes validate them against the contract. */
// Diff observe (issue 38) on a real GTK3 app: `since` answers what was added, changed and removed
// since the window's latest snapshot; a token of an element that is still there keeps working,
// a removed element's token is refused, and only the latest snapshot can be a base.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  launchGtkApp,
  startA11yHarness,
  type A11yDesktopHarness,
  type GtkApp,
} from './helpers/a11y-desktop.js';

type Row = { element_token: string; role: string; name?: string; value?: string };

describe('diff observe of a GTK3 window', () => {
  let h: A11yDesktopHarness;
  let app: GtkApp;
  let other: GtkApp;
  const observe = async (windowId: number, extra: object = {}) =>
    h.call('/v1/observe', { window_id: windowId, include_screenshot: false, ...extra });
  const named = (rows: Row[], role: string, name: string) => {
    const row = rows.find((r) => r.role === role && r.name === name);
    expect(row, `${role} ${name}`).toBeDefined();
    return row!;
  };

  beforeAll(async () => {
    h = await startA11yHarness();
    app = await launchGtkApp(h.session, 3, 'Diff Observe');
    other = await launchGtkApp(h.session, 1, 'Other Window');
    await app.send('add-button Keep');
    await app.send('add-button Drop');
  });
  afterAll(async () => {
    await app?.stop();
    await other?.stop();
    await h?.stop();
  });

  it('lists what changed; unchanged tokens still act, removed ones are refused', async () => {
    // The new buttons are announced a frame later (GTK): wait until the base shows both.
    let base = (await observe(app.windowId)).json;
    for (let i = 0; i < 50 && !base.elements.some((r: Row) => r.name === 'Drop'); i += 1) {
      await new Promise((r) => setTimeout(r, 100));
      base = (await observe(app.windowId)).json;
    }
    const keep = named(base.elements, 'push_button', 'Keep');
    const drop = named(base.elements, 'push_button', 'Drop');
    const memo = named(base.elements, 'text', 'Memo');

    await app.send('remove-button Drop');
    await app.send('set-entry typed since the base');
    await app.send('add-button Fresh');
    let res = await observe(app.windowId, { since: base.snapshot_id });
    // The added button may need a frame to be mapped (showing): ask again until it is there.
    for (let i = 0; i < 50 && !res.json.diff?.added.some((r: Row) => r.name === 'Fresh'); i += 1) {
      await new Promise((r) => setTimeout(r, 100));
      // Each diff becomes the latest snapshot: the next one is asked against it.
      const previous = res.json;
      res = await observe(app.windowId, { since: previous.snapshot_id });
      // Fold what an earlier round already reported, as an agent keeping its view would.
      res.json.diff.removed.push(...previous.diff.removed);
      res.json.diff.changed.push(...previous.diff.changed);
    }
    expect(res.status, JSON.stringify(res.json).slice(0, 500)).toBe(200);
    const { diff, elements, invalidated_snapshot_ids } = res.json;
    expect(elements).toEqual([]);
    expect(invalidated_snapshot_ids).toEqual([]);
    expect(diff.removed).toContain(drop.element_token);
    expect(diff.added.map((r: Row) => r.name)).toContain('Fresh');
    expect(diff.changed).toContainEqual(
      expect.objectContaining({
        element_token: memo.element_token,
        value: 'typed since the base',
      }),
    );
    expect(diff.unchanged_count).toBeGreaterThan(5);
    expect(diff.removed).not.toContain(keep.element_token);
    const bytes = Buffer.byteLength(JSON.stringify(res.json));
    console.log(
      `diff: ${diff.added.length} added, ${diff.changed.length} changed, ${diff.removed.length} removed, ${diff.unchanged_count} unchanged; ${bytes} bytes, guest ${res.json.duration_ms.toFixed(1)} ms`,
    );

    // The token of an element that is still there, issued before the diff, still acts.
    const clicked = await h.call('/v1/act/element', {
      window_id: app.windowId,
      element_token: keep.element_token,
      action: 'click',
    });
    expect(clicked.json.effect, JSON.stringify(clicked.json)).not.toBe('refused');
    await app.waitForLine(/^CLICKED Keep$/);

    // The removed element's token is refused, nothing delivered.
    const refused = await h.call('/v1/act/element', {
      window_id: app.windowId,
      element_token: drop.element_token,
      action: 'click',
    });
    expect(refused.json.effect).toBe('refused');
    expect(refused.json.error.code).toBe('stale_element_token');
    expect(app.lines).not.toContain('CLICKED Drop');
  });

  it('only the window’s latest snapshot is a base: 422 stale_snapshot says why', async () => {
    const first = (await observe(app.windowId)).json;
    const second = (await observe(app.windowId)).json;
    const theirs = (await observe(other.windowId)).json;
    const reasons: Record<string, unknown> = {};
    for (const [why, since] of [
      ['replaced', first.snapshot_id],
      ['other_window', theirs.snapshot_id],
      ['unknown', 's9zzzzz'],
    ] as const) {
      const res = await observe(app.windowId, { since });
      expect(res.status, JSON.stringify(res.json)).toBe(422);
      expect(res.json.error.code).toBe('stale_snapshot');
      reasons[why] = res.json.error.details?.reason;
    }
    expect(reasons).toEqual({
      replaced: 'replaced',
      other_window: 'other_window',
      unknown: 'unknown',
    });
    // The refusals changed nothing: the latest snapshot is still a base, and its tokens act.
    const diff = await observe(app.windowId, { since: second.snapshot_id });
    expect(diff.status).toBe(200);
    expect(diff.json.diff.since).toBe(second.snapshot_id);
  });
});
