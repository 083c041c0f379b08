/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are read loosely here; the routes validate them against the contract. */
// The guest driver on Firefox ESR (launched as `app: "browser.firefox"` with the sandbox's browser
// policy): a local page's web roles and names come with tokens, a button is confirmed by the
// element it controls, a checkbox is set by state, typed text is read back, and a download lands
// without a prompt where the files API reads it (the policy's download directory).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startA11yHarness, type A11yDesktopHarness } from './helpers/a11y-desktop.js';
import { launchApp, observeUntil, type LaunchedApp, type Row } from './helpers/launched-app.js';

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Firefox Fixture</title></head>
<body>
<h1>Firefox fixture</h1>
<label>Full name <input id="name" type="text"></label>
<label><input id="agree" type="checkbox"> I agree</label>
<p id="status">status: idle</p>
<p><a href="/report.csv">Download report</a></p>
<button id="save" aria-controls="status">Save</button>
<table aria-label="Rows"><tbody>
<tr><td>Row 1</td><td><button>Delete</button></td></tr>
<tr><td>Row 2</td><td><button>Delete</button></td></tr>
</tbody></table>
<script>document.getElementById('save').addEventListener('click', () => {
  document.getElementById('status').textContent = 'status: saved';
});</script>
</body></html>`;

const REPORT = 'quarter,revenue\nQ1,12\nQ2,15\n';

describe('Firefox ESR through the guest driver', () => {
  let h: A11yDesktopHarness;
  let server: Server;
  let ff: LaunchedApp | undefined;
  const observe = async () =>
    (await h.call('/v1/observe', { window_id: ff!.windowId, include_screenshot: false })).json
      .elements as Row[];
  const act = async (body: Record<string, unknown>) =>
    (await h.call('/v1/act/element', { window_id: ff!.windowId, ...body })).json;

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/report.csv') {
        res.setHeader('content-type', 'text/csv');
        res.setHeader('content-disposition', 'attachment; filename="report.csv"');
        res.end(REPORT);
        return;
      }
      res.setHeader('content-type', 'text/html; charset=utf-8').end(PAGE);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    h = await startA11yHarness();
    ff = await launchApp(h, 'browser.firefox', {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    });
    // The page's tree arrives after the window: wait for its last control.
    await observeUntil(h, ff.windowId, (r) => r.role === 'push_button' && r.name === 'Delete');
  });
  afterAll(async () => {
    await ff?.stop();
    await h?.stop();
    server?.close();
  });

  it('observe returns the page with web roles, names and a token per element', async () => {
    const rows = await observe();
    const find = (role: string, name: string) =>
      rows.filter((r) => r.role === role && r.name === name);
    expect(find('document_web', 'Firefox Fixture')).toHaveLength(1);
    expect(find('heading', 'Firefox fixture')).toHaveLength(1);
    expect(find('entry', 'Full name')).toHaveLength(1);
    expect(find('check_box', 'I agree')).toHaveLength(1);
    const twins = find('push_button', 'Delete');
    expect(twins).toHaveLength(2);
    expect(new Set(twins.map((r) => r.element_token)).size).toBe(2);
  });

  it('a button is confirmed by the change of the element it controls', async () => {
    const save = (await observe()).find((r) => r.role === 'push_button' && r.name === 'Save');
    const res = await act({ action: 'click', element_token: save!.element_token });
    expect(res.effect, JSON.stringify(res)).toBe('confirmed');
    // The evidence is the controlled paragraph's own change, named by its token.
    const status = (await observe()).find(
      (r) => r.role === 'paragraph' && /saved/.test(r.value ?? ''),
    );
    expect(status, 'the paragraph now reads "status: saved"').toBeDefined();
    expect(
      (res.evidence as any[]).some(
        (e) => e.kind === 'a11y_event' && e.role === 'paragraph' && /text-changed/.test(e.event),
      ),
    ).toBe(true);
  });

  it('a checkbox is set by state, and asking again changes nothing', async () => {
    const box = (await observe()).find((r) => r.role === 'check_box' && r.name === 'I agree');
    const res = await act({ action: 'toggle', element_token: box!.element_token, checked: true });
    expect(res.effect, JSON.stringify(res)).toBe('confirmed');
    const again = await act({ action: 'toggle', element_token: box!.element_token, checked: true });
    expect(again.effect).toBe('confirmed');
    expect(again.delivery?.delivered_count ?? 0).toBe(0);
    const verified = await h.call('/v1/verify_state', {
      window_id: ff!.windowId,
      predicates: [
        {
          kind: 'element_exists',
          selector: { role: 'check_box', name: 'I agree', states: ['checked'] },
          unique: true,
        },
      ],
      timeout_ms: 2_000,
    });
    expect(verified.json.status).toBe('satisfied');
  });

  // set_value (EditableText.SetTextContents) answers true on Firefox ESR 128 and changes nothing
  // (read back "" for 2 s, reported as suspected_noop with a foreground escalation): typing
  // through the focus is the route that reaches a page's field.
  it('text typed into a field in the foreground is read back', async () => {
    const field = (await observe()).find((r) => r.role === 'entry' && r.name === 'Full name');
    const res = await act({
      action: 'type_text',
      element_token: field!.element_token,
      text: 'Ada Lovelace',
      delivery_mode: 'foreground',
    });
    expect(res.effect, JSON.stringify(res)).toBe('confirmed');
    expect(res.evidence[0]).toMatchObject({ kind: 'value_readback', after: 'Ada Lovelace' });
  });

  it('a download lands without a prompt in the home Downloads, readable by the files API', async () => {
    const link = (await observe()).find((r) => r.role === 'link' && r.name === 'Download report');
    await act({ action: 'click', element_token: link!.element_token });
    // Firefox writes `report.csv.part` and renames it when complete: wait for the final name.
    const path = join(ff!.home, 'Downloads', 'report.csv');
    const deadline = Date.now() + 20_000;
    let read: { status: number; json: any } | undefined;
    while (Date.now() < deadline) {
      read = await h.call('/v1/files/read', { path });
      if (read.status === 200 && read.json.content === REPORT) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(read?.json.content, JSON.stringify(read?.json)).toBe(REPORT);
  });
});
