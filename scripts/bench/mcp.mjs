#!/usr/bin/env node
// npm run bench:mcp -- --json [--iterations N]
// What the claim's MCP endpoint adds over REST: the same guest call (windows.list) as the REST
// route and as an MCP tools/call (with a tenant API key, and with a claim-scoped MCP token), over
// one keep-alive connection each, interleaved so both see the same machine load; overhead = MCP −
// REST per pair. Beside it the HTTP floor (GET /v1/version: no key, no database) and the MCP `act`
// round trip on a real desktop (observe, then click a GTK button by element token, the
// ActionResult confirmed or not). Prints one JSON line.
import http from 'node:http';
import { log, percentile, round, startStack } from './lib/stack.mjs';
import { timedRequest } from './lib/timed-request.mjs';

const args = process.argv.slice(2);
const iterations = Number(args[args.indexOf('--iterations') + 1]) || 100;

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const request = (base, method, path, headers, body) =>
  timedRequest(agent, base, method, path, headers, body);

const WINDOW = [
  '/usr/bin/python3',
  '-c',
  "import gi; gi.require_version('Gtk','3.0'); from gi.repository import Gtk; w=Gtk.Window(title='bench-mcp'); w.set_default_size(240,120); w.add(Gtk.Button(label='Press')); w.connect('destroy', Gtk.main_quit); w.show_all(); Gtk.main()",
];

const stats = (values) => ({
  p50_ms: round(percentile(values, 50)),
  p99_ms: round(percentile(values, 99)),
});

const stack = await startStack();
try {
  log('warming one desktop…');
  await stack.warmPool('mcp', { image: 'local', autoscaling: { min: 0, initial: 1, max: 1 } }, 1);
  const claim = (await stack.call('POST', '/v1/pools/mcp/claims', { ttl_seconds: 1800 })).body;
  const minted = await stack.call('POST', `/v1/claims/${claim.id}/mcp-tokens`, {
    ttl_seconds: 1800,
  });
  if (minted.status !== 201) throw new Error(`mcp-tokens: ${minted.status}`);
  const keyHeaders = { authorization: stack.authorization };
  const mcpHeaders = (authorization) => ({
    authorization,
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-06-18',
  });
  const rest = (method, child, body) =>
    request(stack.url, method, `/v1/claims/${claim.id}/${child}`, keyHeaders, body);
  let rpcId = 0;
  const tool = async (authorization, name, args) => {
    const answer = await request(
      stack.url,
      'POST',
      `/v1/claims/${claim.id}/mcp`,
      mcpHeaders(authorization),
      { jsonrpc: '2.0', id: ++rpcId, method: 'tools/call', params: { name, arguments: args } },
    );
    if (answer.body.error) throw new Error(`${name}: ${JSON.stringify(answer.body.error)}`);
    return { ms: answer.ms, result: answer.body.result };
  };
  const viaKey = (name, a) => tool(stack.authorization, name, a);
  const viaToken = (name, a) => tool(`Bearer ${minted.body.token}`, name, a);

  const launched = await viaKey('windows_launch', { argv: WINDOW, wait_for_window_ms: 20_000 });
  const windowId = launched.result.structuredContent.window.window_id;

  log(`measuring windows.list over REST and MCP × ${iterations}…`);
  const samples = { rest: [], mcpKey: [], mcpToken: [], overKey: [], overToken: [], floor: [] };
  for (let i = -10; i < iterations; i++) {
    // Rotate the order so no side always gets the warmer caches.
    const runs = [
      ['rest', () => rest('GET', 'windows')],
      ['mcpKey', () => viaKey('windows_list', {})],
      ['mcpToken', () => viaToken('windows_list', {})],
      ['floor', () => request(stack.url, 'GET', '/v1/version', {})],
    ];
    const shift = ((i % runs.length) + runs.length) % runs.length;
    const timed = {};
    for (const [name, run] of [...runs.slice(shift), ...runs.slice(0, shift)])
      timed[name] = (await run()).ms;
    if (i < 0) continue; // warm-up
    for (const k of ['rest', 'mcpKey', 'mcpToken', 'floor']) samples[k].push(timed[k]);
    samples.overKey.push(timed.mcpKey - timed.rest);
    samples.overToken.push(timed.mcpToken - timed.rest);
  }

  log('measuring the MCP act round trip (observe, then click by token)…');
  const acts = [];
  const effects = {};
  const actIterations = Math.max(10, Math.round(iterations / 4));
  for (let i = -2; i < actIterations; i++) {
    const observed = await viaToken('observe', { window_id: windowId, include_screenshot: false });
    const button = observed.result.structuredContent.elements.find((e) => e.role === 'push_button');
    if (!button) throw new Error('the bench window has no push_button in its tree');
    const acted = await viaToken('act', {
      window_id: windowId,
      element_token: button.element_token,
      action: 'click',
    });
    if (i < 0) continue;
    acts.push(acted.ms);
    const effect = acted.result.structuredContent.effect;
    effects[effect] = (effects[effect] ?? 0) + 1;
  }

  const overhead = percentile(samples.overKey, 50);
  const line = {
    bench: 'mcp',
    iterations,
    operation: 'windows.list',
    rest: stats(samples.rest),
    mcp_api_key: stats(samples.mcpKey),
    mcp_token: stats(samples.mcpToken),
    overhead_api_key: stats(samples.overKey),
    overhead_mcp_token: stats(samples.overToken),
    http_floor: stats(samples.floor),
    act_round_trip: { ...stats(acts), iterations: actIterations, effects },
    goals: [
      {
        goal: 'MCP tool call adds <= 2 ms at p50 over the same REST call (API key)',
        value: round(overhead),
        limit: 2,
        met: overhead <= 2,
      },
    ],
  };
  await stack.call('DELETE', `/v1/claims/${claim.id}`);
  process.stdout.write(`${JSON.stringify(line)}\n`);
} finally {
  agent.destroy();
  await stack.stop();
}
