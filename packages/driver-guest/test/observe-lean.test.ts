/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are read loosely here; the routes validate them against the contract. */
// Lean observations (issue 38) on a real LibreOffice Writer: the default observe returns what a
// person could see, closed menus counted on their menu row; `include_hidden: true` is the full
// tree, and a token from it acts on an item of a closed menu.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startA11yHarness, type A11yDesktopHarness } from './helpers/a11y-desktop.js';
import { launchApp, observeUntil, type LaunchedApp } from './helpers/launched-app.js';

type Row = {
  element_token: string;
  role: string;
  name?: string;
  states: string[];
  parent?: string;
  hidden_descendants?: number;
};
type Observed = { rows: Row[]; bytes: number; guestMs: number; truncated: unknown };

describe('lean observe of LibreOffice Writer', () => {
  let h: A11yDesktopHarness;
  let writer: LaunchedApp;
  const observe = async (extra: object = {}): Promise<Observed> => {
    const res = await h.call('/v1/observe', {
      window_id: writer.windowId,
      include_screenshot: false,
      max_elements: 10_000,
      ...extra,
    });
    expect(res.status, JSON.stringify(res.json).slice(0, 500)).toBe(200);
    return {
      rows: res.json.elements,
      bytes: Buffer.byteLength(JSON.stringify(res.json)),
      guestMs: res.json.duration_ms,
      truncated: res.json.truncated,
    };
  };
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

  beforeAll(async () => {
    h = await startA11yHarness();
    writer = await launchApp(h, 'office.writer');
    // The document fills its tree after the window maps: wait for the paragraph, then for the
    // full tree's size to hold still between two reads.
    await observeUntil(h, writer.windowId, (r) => r.role === 'paragraph', {
      roles: ['paragraph'],
    });
    let last = -1;
    for (let i = 0; i < 40; i++) {
      const n = (await observe({ include_hidden: true })).rows.length;
      if (n === last) break;
      last = n;
      await new Promise((r) => setTimeout(r, 500));
    }
  }, 120_000);
  afterAll(async () => {
    await writer?.stop();
    await h?.stop();
  });

  it('default observe returns the showing elements, hidden subtrees counted on their parent', async () => {
    let lean!: Observed;
    let full!: Observed;
    // Read full, lean, full: the two full reads agreeing shows the tree held still in between.
    for (let attempt = 0; attempt < 5; attempt++) {
      const before = await observe({ include_hidden: true });
      lean = await observe();
      full = await observe({ include_hidden: true });
      if (before.rows.length === full.rows.length) break;
    }
    expect(full.truncated).toBe(false);
    expect(lean.truncated).toBe(false);
    const hidden = lean.rows.reduce((n, r) => n + (r.hidden_descendants ?? 0), 0);
    // Nothing lost: returned rows plus the counts are the full tree.
    expect(lean.rows.length + hidden).toBe(full.rows.length);
    // Every showing element of the full tree is in the lean one.
    const showing = (rows: Row[]) => rows.filter((r) => r.states.includes('showing')).length;
    expect(showing(lean.rows)).toBe(showing(full.rows));
    // A row that is not showing is there only as structure above a showing one.
    const byToken = new Map(lean.rows.map((r) => [r.element_token, r]));
    const hasShowingBelow = new Set<string>();
    for (const r of lean.rows) {
      if (!r.states.includes('showing')) continue;
      for (let p = r.parent; p; p = byToken.get(p)?.parent) hasShowingBelow.add(p);
    }
    const stray = lean.rows.filter(
      (r) => !r.states.includes('showing') && !hasShowingBelow.has(r.element_token),
    );
    expect(stray.map((r) => `${r.role} ${r.name ?? ''}`)).toEqual([]);
    // Closed menus are one row each, on the menu bar, with their items counted.
    const menus = lean.rows.filter((r) => r.role === 'menu' && (r.hidden_descendants ?? 0) > 0);
    expect(menus.map((r) => r.name)).toEqual(expect.arrayContaining(['File', 'Edit', 'View']));
    expect(lean.rows.length * 4).toBeLessThan(full.rows.length);
    expect(lean.bytes * 4).toBeLessThan(full.bytes);

    // Figures: several reads of each mode, guest time and bytes.
    const leanMs: number[] = [];
    const fullMs: number[] = [];
    for (let i = 0; i < 7; i++) {
      leanMs.push((await observe()).guestMs);
      fullMs.push((await observe({ include_hidden: true })).guestMs);
    }
    console.log(
      JSON.stringify({
        bench: 'observe-writer-empty',
        lean: {
          elements: lean.rows.length,
          showing: showing(lean.rows),
          bytes: lean.bytes,
          guest_ms_p50: Math.round(median(leanMs) * 10) / 10,
          guest_ms_min: Math.round(Math.min(...leanMs) * 10) / 10,
        },
        full: {
          elements: full.rows.length,
          bytes: full.bytes,
          guest_ms_p50: Math.round(median(fullMs) * 10) / 10,
          guest_ms_min: Math.round(Math.min(...fullMs) * 10) / 10,
        },
        summary_rows: lean.rows.filter((r) => r.hidden_descendants).length,
      }),
    );
  });

  it('a token from a lean observe acts as before', async () => {
    const lean = await observe();
    const paragraph = lean.rows.find((r) => r.role === 'paragraph');
    expect(paragraph).toBeDefined();
    const text = 'lean observe';
    const typed = await h.call('/v1/act/element', {
      window_id: writer.windowId,
      action: 'type_text',
      element_token: paragraph!.element_token,
      text,
    });
    expect(typed.json.effect, JSON.stringify(typed.json)).toBe('confirmed');
  });

  it('an item of a closed menu, expanded with include_hidden, acts by its token', async () => {
    // Insert > Field > Date: hidden in a closed menu; it writes today's date into the paragraph
    // the previous test typed into.
    const paragraphText = async () =>
      (await observe({ roles: ['paragraph'] })).rows.map((r: any) => r.value ?? '').join('\n');
    const before = await paragraphText();
    expect(before).toContain('lean observe');
    const lean = await observe();
    const insert = lean.rows.find((r) => r.role === 'menu' && r.name === 'Insert');
    expect(insert?.hidden_descendants).toBeGreaterThan(0);
    const isDate = (r: Row) => r.role === 'menu_item' && r.name === 'Date';
    expect(lean.rows.some(isDate)).toBe(false);
    const full = await observe({ include_hidden: true });
    const item = full.rows.find(isDate);
    expect(item, 'Insert > Field > Date in the full tree').toBeDefined();
    expect(item!.states).not.toContain('showing');
    const res = await h.call('/v1/act/element', {
      window_id: writer.windowId,
      action: 'click',
      element_token: item!.element_token,
    });
    expect(res.json.effect, JSON.stringify(res.json)).not.toBe('refused');
    const deadline = Date.now() + 5_000;
    let after = await paragraphText();
    while (after === before && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      after = await paragraphText();
    }
    expect(after).not.toBe(before);
    expect(after).toMatch(/lean observe.*\d/);
  });
});
