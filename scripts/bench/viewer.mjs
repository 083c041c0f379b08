#!/usr/bin/env node
// npm run bench:viewer -- --json [--iterations N]
// The live view, measured on the real stack: minting a viewer ticket through the API; Chromium
// loading /embed/{ticket} from `next start` until the first non-black frame is drawn; the RFB
// round trip (FramebufferUpdateRequest → FramebufferUpdate) through the API's stream proxy minus
// the same straight to the sandbox's x11vnc (pairs interleaved, so both see the same load); and
// throughput of full-screen raw updates through the proxy. Prints one JSON line.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { RfbClient, tcpTransport, wsTransport } from './lib/rfb-client.mjs';
import { log, percentile, round, startStack } from './lib/stack.mjs';
import { startWeb } from './lib/web-app.mjs';

const args = process.argv.slice(2);
const isJson = args.includes('--json');
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) || fallback : fallback;
};
const iterations = option('--iterations', 10);
const root = fileURLToPath(new URL('../../', import.meta.url));
const fromRoot = (p) => import(pathToFileURL(join(root, p)).href);
const CHROMIUM = '/usr/bin/chromium';

const WINDOW = [
  '/usr/bin/python3',
  '-c',
  "import gi; gi.require_version('Gtk','3.0'); from gi.repository import Gtk; w=Gtk.Window(title='bench-viewer'); w.set_default_size(800,500); w.add(Gtk.Label(label='bench-viewer')); w.connect('destroy', Gtk.main_quit); w.show_all(); Gtk.main()",
];

// Runs in the page: resolves with performance.now() (ms since navigation start) at the first
// animation frame whose noVNC canvas is not all black.
const FIRST_FRAME = `new Promise((resolve) => {
  const check = () => {
    const canvas = document.querySelector('[data-testid=vnc] canvas');
    if (canvas && canvas.width > 0) {
      const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
      for (let i = 0; i < data.length; i += 4 * 61) {
        if (data[i] + data[i + 1] + data[i + 2] > 48) return resolve(performance.now());
      }
    }
    requestAnimationFrame(check);
  };
  check();
})`;

const stack = await startStack();
let web;
let browser;
let profile;
try {
  log('warming one desktop…');
  await stack.warmPool(
    'viewer',
    { image: 'local', autoscaling: { min: 0, initial: 1, max: 1 } },
    1,
  );
  const claim = (await stack.call('POST', '/v1/pools/viewer/claims', { ttl_seconds: 1800 })).body;
  const launched = await stack.call('POST', `/v1/claims/${claim.id}/windows/launch`, {
    argv: WINDOW,
    wait_for_window_ms: 20_000,
  });
  if (launched.body.window_wait !== 'found') throw new Error('the bench window did not appear');
  const mint = async () => {
    const started = performance.now();
    const res = await stack.call('POST', `/v1/claims/${claim.id}/viewer-tickets`, {
      mode: 'view',
      ttl_seconds: 900,
    });
    if (res.status !== 201) throw new Error(`mint: ${res.status} ${JSON.stringify(res.body)}`);
    return { ms: performance.now() - started, ticket: res.body.ticket };
  };

  log('minting tickets…');
  for (let i = 0; i < 5; i += 1) await mint();
  const mintMs = [];
  for (let i = 0; i < 50; i += 1) mintMs.push((await mint()).ms);

  log('first frames in Chromium…');
  web = await startWeb(stack);
  const { chromium } = await fromRoot('node_modules/playwright-core/index.mjs');
  profile = mkdtempSync(join(tmpdir(), 'cubicle-bench-chromium-'));
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 800 },
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const firstFrameMs = [];
  for (let i = 0; i <= iterations; i += 1) {
    const { ticket } = await mint();
    const page = await browser.newPage();
    await page.goto(`${web.url}/embed/${ticket}`, { waitUntil: 'commit' });
    const ms = await page.evaluate(FIRST_FRAME);
    await page.close();
    // The first load fills the browser's cache (noVNC's chunk); it is reported apart.
    if (i === 0) log(`first frame, cold browser cache: ${round(ms)} ms`);
    else firstFrameMs.push(ms);
  }

  log('RFB round trips, proxy vs direct…');
  const sandbox = await stack.db.sandbox.findUniqueOrThrow({ where: { id: claim.sandbox.id } });
  const { WebSocket } = await fromRoot('node_modules/ws/wrapper.mjs');
  const streamUrl = `${stack.url.replace(/^http/, 'ws')}/v1/viewer/stream?ticket=${(await mint()).ticket}`;
  const { parseKeyring } = await fromRoot('packages/control-plane/dist/index.js');
  const { vncPreambleForSandbox } = await fromRoot('packages/viewer/dist/index.js');
  const preamble = await vncPreambleForSandbox(stack.db, parseKeyring(stack.keyring), sandbox.id);
  const direct = new RfbClient(await tcpTransport(sandbox.vncEndpoint, preamble));
  const proxied = new RfbClient(await wsTransport(WebSocket, streamUrl));
  await direct.handshake();
  await proxied.handshake();
  const roundTrip = async (client) => {
    const started = performance.now();
    await client.update(0, 0, 16, 16);
    return performance.now() - started;
  };
  for (let i = 0; i < 20; i += 1) {
    await roundTrip(direct);
    await roundTrip(proxied);
  }
  const directMs = [];
  const proxiedMs = [];
  const addedMs = [];
  for (let i = 0; i < 200; i += 1) {
    const d = await roundTrip(direct);
    const p = await roundTrip(proxied);
    directMs.push(d);
    proxiedMs.push(p);
    addedMs.push(p - d);
  }

  log('throughput of full-screen raw updates…');
  const throughput = async (client) => {
    let bytes = 0;
    const started = performance.now();
    while (performance.now() - started < 3_000)
      bytes += await client.update(0, 0, client.width, client.height);
    return bytes / 1e6 / ((performance.now() - started) / 1000);
  };
  const proxyMbPerS = await throughput(proxied);
  const directMbPerS = await throughput(direct);
  direct.close();
  proxied.close();

  log(
    `round trip p50 direct ${round(percentile(directMs, 50), 3)} ms, via proxy ${round(percentile(proxiedMs, 50), 3)} ms; ` +
      `direct ${round(directMbPerS, 1)} MB/s; ${iterations} page loads`,
  );
  const result = {
    bench: 'viewer',
    ticket_mint_p50_ms: round(percentile(mintMs, 50)),
    first_frame_p50_ms: round(percentile(firstFrameMs, 50)),
    proxy_added_latency_p50_ms: round(percentile(addedMs, 50), 3),
    proxy_mb_per_s: round(proxyMbPerS, 1),
  };
  console.log(isJson ? JSON.stringify(result) : JSON.stringify(result, null, 2));
} finally {
  await browser?.close().catch(() => undefined);
  if (profile) rmSync(profile, { recursive: true, force: true });
  await web?.stop();
  await stack.stop();
}
