#!/usr/bin/env node
// npm run bench:act -- --json [--iterations N]
// Control-plane overhead of driving a sandbox: the same guest calls made straight to the guest
// driver and through the API (real HTTP listener) → Redis → worker → guest, interleaved so both
// see the same machine load. overhead = via API − direct, per pair. Each API answer's
// Server-Timing header says where its time went (the API's enqueue and wait, the lane, the
// worker's live-claim lookup, guest round trip, answer check and store): their p50s per operation
// are printed as `hops_p50_ms`, beside the guest's own `duration_ms` where it answers one.
// Prints one JSON line, with the load average at start and end.
import http from 'node:http';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { log, percentile, round, startStack } from './lib/stack.mjs';
import { hopsP50, parseServerTiming } from './lib/server-timing.mjs';
import { timedRequest } from './lib/timed-request.mjs';

const args = process.argv.slice(2);
const iterations = Number(args[args.indexOf('--iterations') + 1]) || 60;
const root = fileURLToPath(new URL('../../', import.meta.url));
const { open, parseKeyring } = await import(
  pathToFileURL(join(root, 'packages/control-plane/dist/index.js')).href
);

// Both sides get the same client: node:http with a keep-alive agent, one connection each.
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const request = (base, method, path, headers, body) =>
  timedRequest(agent, base, method, path, headers, body);

// A small GTK window with one button: observe walks a handful of nodes, a click changes nothing.
const WINDOW = [
  '/usr/bin/python3',
  '-c',
  "import gi; gi.require_version('Gtk','3.0'); from gi.repository import Gtk; w=Gtk.Window(title='bench-act'); w.set_default_size(240,120); w.add(Gtk.Button(label='Press')); w.connect('destroy', Gtk.main_quit); w.show_all(); Gtk.main()",
];

const startLoad = round(loadavg()[0]);
const stack = await startStack();
try {
  log('warming one desktop…');
  await stack.warmPool('act', { image: 'local', autoscaling: { min: 0, initial: 1, max: 1 } }, 1);
  const claim = (await stack.call('POST', '/v1/pools/act/claims', { ttl_seconds: 1800 })).body;
  const sandbox = await stack.db.sandbox.findUniqueOrThrow({ where: { id: claim.sandbox.id } });
  const guest = {
    base: sandbox.guestEndpoint,
    headers: {
      authorization: `Bearer ${open(parseKeyring(stack.keyring), sandbox.guestTokenCiphertext, sandbox.id)}`,
    },
  };
  const api = { base: stack.url, headers: { authorization: stack.authorization } };
  const viaApi = (method, child, body) =>
    request(api.base, method, `/v1/claims/${claim.id}/${child}`, api.headers, body);
  const direct = (method, path, body) =>
    request(guest.base, method, `/v1/${path}`, guest.headers, body);

  const launched = await viaApi('POST', 'windows/launch', {
    argv: WINDOW,
    wait_for_window_ms: 20_000,
  });
  const windowId = launched.body.window.window_id;
  const first = await direct('POST', 'observe', { window_id: windowId, include_screenshot: false });
  const hasA11y = first.body.elements.some((e) => e.role === 'push_button');

  const ops = {
    'windows.list': { direct: () => direct('GET', 'windows'), api: () => viaApi('GET', 'windows') },
    screenshot: {
      direct: () => direct('POST', 'screenshot', { window_id: windowId, max_dimension: 256 }),
      api: () => viaApi('POST', 'screenshot', { window_id: windowId, max_dimension: 256 }),
    },
    ...(hasA11y
      ? {
          observe: {
            direct: () =>
              direct('POST', 'observe', { window_id: windowId, include_screenshot: false }),
            api: () =>
              viaApi('POST', 'observe', { window_id: windowId, include_screenshot: false }),
          },
          // Observe again right before each click: tokens belong to the latest snapshot.
          click: {
            direct: async () => {
              const token = (
                await direct('POST', 'observe', { window_id: windowId, include_screenshot: false })
              ).body.elements.find((e) => e.role === 'push_button').element_token;
              return direct('POST', 'act/element', {
                window_id: windowId,
                element_token: token,
                action: 'click',
              });
            },
            api: async () => {
              const token = (
                await direct('POST', 'observe', { window_id: windowId, include_screenshot: false })
              ).body.elements.find((e) => e.role === 'push_button').element_token;
              return viaApi('POST', 'act', {
                window_id: windowId,
                element_token: token,
                action: 'click',
              });
            },
          },
        }
      : {}),
  };
  // What a plain authenticated read of the claim costs through the API (no queue, no guest):
  // the part of the overhead that any REST call pays.
  const baseline = [];
  for (let i = 0; i < iterations; i++)
    baseline.push((await request(api.base, 'GET', `/v1/claims/${claim.id}`, api.headers)).ms);
  log(`measuring ${Object.keys(ops).length} operations × ${iterations}…`);
  const samples = Object.fromEntries(
    Object.keys(ops).map((k) => [k, { direct: [], api: [], overhead: [], hops: [], guestOwn: [] }]),
  );
  for (let i = -5; i < iterations; i++) {
    for (const [name, op] of Object.entries(ops)) {
      // Alternate which side goes first so neither always gets the warmer caches.
      const [a, b] = i % 2 ? [op.direct, op.api] : [op.api, op.direct];
      const ra = await a();
      const rb = await b();
      const [d, v] = i % 2 ? [ra.ms, rb.ms] : [rb.ms, ra.ms];
      const viaAnswer = i % 2 ? rb : ra;
      if (i < 0) continue; // warm-up
      samples[name].direct.push(d);
      samples[name].api.push(v);
      samples[name].overhead.push(v - d);
      samples[name].hops.push(parseServerTiming(viaAnswer.headers?.['server-timing']));
      if (typeof viaAnswer.body?.duration_ms === 'number')
        samples[name].guestOwn.push(viaAnswer.body.duration_ms);
    }
  }
  const all = (k) => Object.values(samples).flatMap((s) => s[k]);
  const line = {
    bench: 'act',
    iterations,
    direct_p50_ms: round(percentile(all('direct'), 50)),
    via_api_p50_ms: round(percentile(all('api'), 50)),
    overhead_p50_ms: round(percentile(all('overhead'), 50)),
    overhead_p99_ms: round(percentile(all('overhead'), 99)),
    api_get_claim_p50_ms: round(percentile(baseline, 50)),
    operations: Object.fromEntries(
      Object.entries(samples).map(([k, s]) => [
        k,
        {
          direct_p50_ms: round(percentile(s.direct, 50)),
          via_api_p50_ms: round(percentile(s.api, 50)),
          overhead_p50_ms: round(percentile(s.overhead, 50)),
          ...(s.guestOwn.length ? { guest_own_p50_ms: round(percentile(s.guestOwn, 50)) } : {}),
          hops_p50_ms: hopsP50(s.hops),
        },
      ]),
    ),
    observe_available: hasA11y,
    loadavg_1m_start: startLoad,
    loadavg_1m: round(loadavg()[0]),
  };
  await stack.call('DELETE', `/v1/claims/${claim.id}`);
  process.stdout.write(`${JSON.stringify(line)}\n`);
} finally {
  agent.destroy();
  await stack.stop();
}
