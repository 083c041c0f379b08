// Chromium never announces `showing` when web content comes on screen: a page (or a frame of
// it) that the driver first read off screen, or before Chromium laid it out, stayed hidden in
// every lean observe (issue 35's recording-apps test: a Chromium window titled with its page
// listed only the browser's own 43 rows for 120 s). Here the off-screen content is made on
// purpose: an iframe's document and a block of the page itself, both moved on screen after the
// driver read them, well past the mirror's FRESH_MS re-reads.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startA11yHarness, type A11yDesktopHarness } from './helpers/a11y-desktop.js';
import { killGroupAndWait } from './helpers/launched-app.js';

type Row = { role: string; name?: string; states: string[] };

const FRAME = `<!doctype html><html><body>
<label>Headline <input aria-label="Headline"></label><div><button>Paint</button></div>
</body></html>`;
// The frame sits far above the page, then comes on screen when the test clicks `Show frame`: no
// announcement of `showing` follows from Chromium.
const PAGE = `<!doctype html><html><head><title>Late frame</title></head><body>
<button onclick="document.getElementById('f').style.top = '120px'">Show frame</button>
<iframe id="f" title="Late" src="/frame" style="position:absolute; top:-3000px; width:900px; height:300px"></iframe>
</body></html>`;

describe('web content Chromium shows without announcing it (lean observe)', () => {
  let h: A11yDesktopHarness;
  let server: Server;
  let home: string;
  let url = '';
  let browserPid: number | undefined;

  beforeAll(async () => {
    server = createServer((req, res) =>
      res.setHeader('content-type', 'text/html').end(req.url === '/frame' ? FRAME : PAGE),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    home = mkdtempSync(join(tmpdir(), 'cubicle-late-showing-'));
    h = await startA11yHarness();
  }, 60_000);
  afterAll(async () => {
    if (browserPid) await killGroupAndWait(browserPid);
    await h?.stop();
    server?.close();
    if (home) rmSync(home, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  });

  it('a frame read off screen shows in a lean observe once it is on screen', async () => {
    const launched = await h.call('/v1/windows/launch', {
      app: 'browser',
      url,
      env: { HOME: home },
      wait_for_window_ms: 60_000,
    });
    expect(launched.json.window_wait).toBe('found');
    const windowId = launched.json.window.window_id as number;
    browserPid = launched.json.pid;
    const observe = async (extra: object = {}) =>
      (await h.call('/v1/observe', { window_id: windowId, include_screenshot: false, ...extra }))
        .json.elements as Row[];
    const paint = (rows: Row[]) => rows.find((r) => r.role === 'push_button' && r.name === 'Paint');
    const until = async (what: string, ok: (rows: Row[]) => boolean, extra: object = {}) => {
      const deadline = Date.now() + 60_000;
      let rows: Row[] = [];
      while (Date.now() < deadline) {
        rows = await observe(extra);
        if (ok(rows)) return rows;
        await new Promise((r) => setTimeout(r, 250));
      }
      throw new Error(`${what}: ${JSON.stringify(rows.map((r) => `${r.role}:${r.name ?? ''}`))}`);
    };
    // Read while off screen: the frame's button is in the tree, not showing, so a lean observe
    // leaves it out.
    const offscreen = await until(
      'the frame read off screen',
      (rows) => paint(rows) !== undefined,
      {
        include_hidden: true,
      },
    );
    expect(paint(offscreen)!.states).not.toContain('showing');
    expect(paint(await observe())).toBeUndefined();
    // Past the mirror's re-reads of freshly read objects (FRESH_MS, 2 s), then on screen.
    await new Promise((r) => setTimeout(r, 3_000));
    const show = (await observe()).find((r) => r.role === 'push_button' && r.name === 'Show frame');
    expect(show, 'the page button').toBeDefined();
    const clicked = await h.call('/v1/act/element', {
      window_id: windowId,
      action: 'click',
      element_token: (show as Row & { element_token: string }).element_token,
    });
    expect(clicked.status, JSON.stringify(clicked.json)).toBe(200);
    const shown = await until('the frame on screen, in a lean observe', (rows) => {
      const row = paint(rows);
      return row !== undefined && row.states.includes('showing');
    });
    expect(paint(shown)!.states).toContain('showing');
  }, 180_000);
});
