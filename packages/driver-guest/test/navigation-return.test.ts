// A call returns as soon as its evidence arrives, navigation included (issue 38). A link click
// waits up to 3 s for a navigation; when the window's title had already changed a few times in
// the last 10 s (here: the page retitled itself), a new title alone is not proof, and the click
// used to wait out the whole bound and answer `unverifiable` although the title changed at once
// (3.1 s, measured). Now it asks whether the document was swapped, and answers on the title.
// Bounds here are generous (a loaded 2-core machine); the speed goal is in bench:observe.
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startA11yHarness, type A11yDesktopHarness } from './helpers/a11y-desktop.js';
import { launchApp, observeUntil, type LaunchedApp, type Row } from './helpers/launched-app.js';

const run = promisify(execFile);

const PAGE_A = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Page A</title></head>
<body><h1>A</h1><p><a href="/b">Go to B</a></p><button onclick="retitle()">Retitle</button>
<script>let n=0;function retitle(){let k=0;const t=setInterval(()=>{document.title='Page A '+(++n);if(++k>=4)clearInterval(t);},80);}</script>
</body></html>`;
const PAGE_B = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Page B</title></head>
<body><h1>B</h1><a href="/a">Back to A</a></body></html>`;

describe('a navigating click in Chromium', () => {
  let h: A11yDesktopHarness;
  let server: Server;
  let chromium: LaunchedApp | undefined;
  let url: string;

  beforeAll(async () => {
    server = createServer((req, res) => {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.setHeader('cache-control', 'no-store');
      res.end(req.url === '/b' ? PAGE_B : PAGE_A);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const address = server.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/a`;
    h = await startA11yHarness();
    chromium = await launchApp(h, 'browser', { url });
    await observeUntil(h, chromium.windowId, (r) => r.role === 'link' && r.name === 'Go to B');
  }, 120_000);
  afterAll(async () => {
    await chromium?.stop();
    await h?.stop();
    await new Promise((r) => server?.close(r));
  });

  it('answers on the new title, not at the navigation bound, after the page retitled itself', async () => {
    const windowId = chromium!.windowId;
    const observe = async () =>
      (await h.call('/v1/observe', { window_id: windowId, include_screenshot: false })).json
        .elements as Row[];
    const act = async (token: string) =>
      (
        await h.call('/v1/act/element', {
          window_id: windowId,
          element_token: token,
          action: 'click',
        })
      ).json;
    const retitle = (await observe()).find((r) => r.role === 'push_button' && r.name === 'Retitle');
    expect(retitle).toBeDefined();
    await act(retitle!.element_token);
    // Four titles in 320 ms, then quiet: the window title now counts as "changing on its own".
    await new Promise((r) => setTimeout(r, 1_000));

    const link = (await observe()).find((r) => r.role === 'link' && r.name === 'Go to B');
    expect(link).toBeDefined();
    const before = (
      await run('xdotool', ['getwindowname', String(windowId)], { env: h.session.env })
    ).stdout;
    // The title as X11 shows it, polled beside the call: when did the navigation become visible?
    const t0 = performance.now();
    let titleAt: number | null = null;
    let isPolling = true;
    const poll = (async () => {
      while (isPolling || (titleAt === null && performance.now() - t0 < 5_000)) {
        const now = await run('xdotool', ['getwindowname', String(windowId)], {
          env: h.session.env,
        }).catch(() => ({ stdout: before }));
        if (now.stdout !== before && titleAt === null) titleAt = performance.now() - t0;
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const res = await act(link!.element_token);
    const callMs = performance.now() - t0;
    isPolling = false;
    await poll;
    console.log(
      `navigating click: answered at ${callMs.toFixed(0)} ms, X11 title changed at ${titleAt === null ? '?' : (titleAt as number).toFixed(0)} ms`,
    );
    expect(res.effect, JSON.stringify(res)).toBe('confirmed');
    expect(res.evidence).toContainEqual(
      expect.objectContaining({ event: 'object:property-change:accessible-name', role: 'frame' }),
    );
    expect(titleAt).not.toBeNull();
    // Well inside the 3 s navigation bound, and close to the title change it reports.
    expect(callMs).toBeLessThan(2_000);
    expect(callMs - (titleAt as unknown as number)).toBeLessThan(1_000);
  });
});
