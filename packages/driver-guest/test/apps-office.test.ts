/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are read loosely here; the routes validate them against the contract. */
// The guest driver on LibreOffice (GTK3 VCL plugin, AT-SPI): a formula typed into a Calc cell by
// its token is read back as its computed value; a paragraph typed into Writer is read back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startA11yHarness, TOKEN, type A11yDesktopHarness } from './helpers/a11y-desktop.js';
import { launchApp, observeUntil, type LaunchedApp } from './helpers/launched-app.js';

describe('LibreOffice Calc and Writer through the guest driver', () => {
  let h: A11yDesktopHarness;
  const launched: LaunchedApp[] = [];

  beforeAll(async () => {
    h = await startA11yHarness();
  });
  afterAll(async () => {
    for (const app of launched) await app.stop();
    await h?.stop();
  });

  it('Calc: a formula typed into cell B2 by token reads back as its value', async () => {
    const calc = await launchApp(h, 'office.calc');
    launched.push(calc);
    const { row: cell } = await observeUntil(
      h,
      calc.windowId,
      (r) => r.role === 'table_cell' && r.name === 'B2',
      { roles: ['table_cell'], max_elements: 2_000 },
    );
    const typed = await h.call('/v1/act/element', {
      window_id: calc.windowId,
      action: 'type_text',
      element_token: cell.element_token,
      text: '=6*7+0.5\n',
      delivery_mode: 'foreground',
    });
    expect(typed.status).toBe(200);
    expect(typed.json.effect, JSON.stringify(typed.json)).not.toBe('refused');
    const verified = await h.call('/v1/verify_state', {
      window_id: calc.windowId,
      predicates: [
        {
          kind: 'element_exists',
          selector: { role: 'table_cell', name: 'B2', value: '42.5' },
          unique: true,
        },
      ],
      timeout_ms: 10_000,
    });
    expect(verified.json.status, JSON.stringify(verified.json)).toBe('satisfied');
    // The same value through observe: the cell's row carries it.
    const { row } = await observeUntil(
      h,
      calc.windowId,
      (r) => r.name === 'B2' && r.value === '42.5',
      { roles: ['table_cell'], query: 'B2' },
      5_000,
    );
    expect(row.element_token).toMatch(/^s/);
    // The profile turned first-start dialogs off: the document is the app's only window.
    const windows = (
      await h.app.inject({
        method: 'GET',
        url: '/v1/windows',
        headers: { authorization: `Bearer ${TOKEN}` },
      })
    ).json().windows as { window_id: number; title: string }[];
    expect(windows.filter((w) => /LibreOffice|Tip/.test(w.title)).map((w) => w.title)).toEqual([
      'Untitled 1 - LibreOffice Calc',
    ]);
  });

  it('Calc: typing by token in background mode is refused with the foreground route named', async () => {
    const calc = launched[0]!;
    const { row: cell } = await observeUntil(
      h,
      calc.windowId,
      (r) => r.role === 'table_cell' && r.name === 'C3',
      { roles: ['table_cell'], query: 'C3' },
    );
    const res = await h.call('/v1/act/element', {
      window_id: calc.windowId,
      action: 'type_text',
      element_token: cell.element_token,
      text: '1',
      delivery_mode: 'background', // omitted, the driver would type it in the foreground
    });
    expect(res.json.effect).toBe('refused');
    expect(res.json.error.code).toBe('action_not_supported');
    expect(res.json.escalation.target).toBe('foreground');
  });

  it('Writer: a paragraph typed by token is read back from the document', async () => {
    const writer = await launchApp(h, 'office.writer');
    launched.push(writer);
    const { row: paragraph } = await observeUntil(
      h,
      writer.windowId,
      (r) => r.role === 'paragraph',
      {
        roles: ['paragraph'],
      },
    );
    const text = 'Quarterly report: revenue grew 12% — drafted by an agent.';
    const typed = await h.call('/v1/act/element', {
      window_id: writer.windowId,
      action: 'type_text',
      element_token: paragraph.element_token,
      text,
    });
    expect(typed.json.effect, JSON.stringify(typed.json)).toBe('confirmed');
    expect(typed.json.evidence[0]).toMatchObject({ kind: 'value_readback', after: text });
    const verified = await h.call('/v1/verify_state', {
      window_id: writer.windowId,
      predicates: [
        { kind: 'element_exists', selector: { role: 'paragraph', value: text }, unique: true },
      ],
      timeout_ms: 5_000,
    });
    expect(verified.json.status, JSON.stringify(verified.json)).toBe('satisfied');
  });
});
