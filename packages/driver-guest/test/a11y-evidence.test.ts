/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are read loosely here; the route validates them against the contract. */
// "Evidence must belong to the action": a window whose clock label ticks every 100 ms must not
// confirm a click that did nothing; a click that changes another label is confirmed by that change.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  launchGtkApp,
  startA11yHarness,
  type A11yDesktopHarness,
  type GtkApp,
} from './helpers/a11y-desktop.js';

const EVIDENCE_APP = fileURLToPath(new URL('./fixtures/gtk-evidence-app.py', import.meta.url));

type Row = { element_token: string; role: string; name?: string };

describe('action evidence on a window with a ticking clock (GTK3)', () => {
  let h: A11yDesktopHarness;
  let app: GtkApp;
  const observe = async () =>
    (await h.call('/v1/observe', { window_id: app.windowId, include_screenshot: false })).json
      .elements as Row[];
  const click = async (name: string) => {
    const rows = await observe();
    const row = rows.find((r) => r.name === name);
    expect(row, `a row named ${name}`).toBeDefined();
    const res = await h.call('/v1/act/element', {
      window_id: app.windowId,
      action: 'click',
      element_token: row!.element_token,
    });
    expect(res.status).toBe(200);
    return res.json;
  };

  beforeAll(async () => {
    h = await startA11yHarness();
    app = await launchGtkApp(h.session, 0, 'Evidence App', [EVIDENCE_APP, 'Evidence App']);
    // Let the clock tick a few times so it is known to be busy before any action.
    await new Promise((r) => setTimeout(r, 500));
  });
  afterAll(async () => {
    await app?.stop();
    await h?.stop();
  });

  it('a button wired to nothing is unverifiable, the clock listed only as an observation', async () => {
    const res = await click('Do nothing');
    await app.waitForLine(/^CLICKED nothing$/);
    expect(res.effect).toBe('unverifiable');
    expect(res.evidence).toBeUndefined();
    const seen = (res.observations ?? []) as any[];
    expect(seen.some((o) => o.kind === 'a11y_event' && /^tick \d+$/.test(o.name))).toBe(true);
  });

  it('a button that changes another label is confirmed by that label, not by the clock', async () => {
    const res = await click('Update status');
    await app.waitForLine(/^CLICKED update 1$/);
    expect(res.effect).toBe('confirmed');
    const evidence = res.evidence as any[];
    expect(evidence).toContainEqual(
      expect.objectContaining({
        kind: 'a11y_event',
        event: 'object:property-change:accessible-name',
        name: 'status: updated 1',
      }),
    );
    expect(evidence.some((e) => /^tick/.test(e.name ?? ''))).toBe(false);
  });

  it('a controller-for relation ties the label to the button', async () => {
    const res = await click('Refresh');
    await app.waitForLine(/^CLICKED update 2$/);
    expect(res.effect).toBe('confirmed');
    expect(res.evidence).toContainEqual(
      expect.objectContaining({ kind: 'a11y_event', name: 'status: updated 2' }),
    );
    expect((res.evidence as any[]).some((e) => /^tick/.test(e.name ?? ''))).toBe(false);
  });

  it('repeated clicks on the idle button stay unverifiable however the clock ticks', async () => {
    for (let i = 0; i < 5; i += 1) {
      const res = await click('Do nothing');
      expect(res.effect).toBe('unverifiable');
    }
  });
});
