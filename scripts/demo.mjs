#!/usr/bin/env node
// npm run demo — with `npm start` running in another terminal: claims a desktop from the pool
// `default`, launches the calculator, presses 6 × 7 = by element tokens, verifies that the
// display reads 42, prints every ActionResult, and releases the claim (also on failure).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
// CUBICLE_URL and CUBICLE_API_KEY, the names the SDKs, the CLI and the Terraform provider read
// (CUBICLE_API_URL and CUBICLE_KEY, the demo's former names, still work).
const api =
  process.env.CUBICLE_URL ??
  process.env.CUBICLE_API_URL ??
  `http://127.0.0.1:${process.env.API_PORT ?? 8080}`;
const keyFile = join(root, '.cubicle', 'admin-key');
const key =
  process.env.CUBICLE_API_KEY ??
  process.env.CUBICLE_KEY ??
  (existsSync(keyFile) ? readFileSync(keyFile, 'utf8').trim() : '');
if (!key) {
  console.error(
    'demo: no API key. Start Cubicle first (`npm start`), or set CUBICLE_API_KEY and CUBICLE_URL.',
  );
  process.exit(2);
}

async function call(method, path, body) {
  const res = await fetch(`${api}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  }).catch((err) => {
    throw new Error(`cannot reach ${api} (${err.message}); is \`npm start\` running?`);
  });
  const json = await res.json();
  if (!res.ok)
    throw new Error(
      `${method} ${path} → ${res.status} ${json.error?.code}: ${json.error?.message}`,
    );
  return json;
}

const say = (line) => console.log(`demo: ${line}`);
say(`claiming a desktop from pool "default" at ${api}…`);
const claim = await call('POST', '/v1/pools/default/claims', {
  wait_seconds: 90,
  metadata: { purpose: 'demo' },
});
if (claim.status !== 'active')
  throw new Error(`the claim is still ${claim.status}; try again when the pool has warm desktops`);
say(`claim ${claim.id} on sandbox ${claim.sandbox.id}`);
const drive = (op, body) =>
  call(body === undefined ? 'GET' : 'POST', `/v1/claims/${claim.id}/${op}`, body);

try {
  const launched = await drive('windows/launch', {
    argv: ['galculator'],
    wait_for_window_ms: 20_000,
  });
  if (!launched.window)
    throw new Error(`galculator did not open a window (${launched.window_wait})`);
  const windowId = launched.window.window_id;
  say(`galculator is window ${windowId} (pid ${launched.pid})`);
  await drive('verify', {
    window_id: windowId,
    predicates: [
      { kind: 'element_exists', selector: { role: 'toggle_button', name: '=' }, unique: true },
    ],
    timeout_ms: 10_000,
  });
  const snapshot = await drive('observe', { window_id: windowId });
  say(`observed ${snapshot.elements.length} elements (snapshot ${snapshot.snapshot_id})`);
  const tokenOf = (name) => {
    const row = snapshot.elements.find((e) => e.role === 'toggle_button' && e.name === name);
    if (!row) throw new Error(`no "${name}" button in the snapshot`);
    return row.element_token;
  };
  for (const [label, name] of [
    ['6', '6'],
    ['×', '*'],
    ['7', '7'],
    ['=', '='],
  ]) {
    const result = await drive('act', {
      window_id: windowId,
      element_token: tokenOf(name),
      action: 'click',
    });
    say(`press ${label} (${tokenOf(name)}) → ${JSON.stringify(result)}`);
  }
  const verdict = await drive('verify', {
    window_id: windowId,
    predicates: [{ kind: 'element_exists', selector: { role: 'text', value: '42' }, unique: true }],
    stable_samples: 2,
    timeout_ms: 5_000,
  });
  say(
    `verify_state "display reads 42" → ${verdict.status}${verdict.unknown_reason ? ` (${verdict.unknown_reason})` : ''}`,
  );
  process.exitCode = verdict.status === 'satisfied' ? 0 : 1;
} finally {
  const released = await call('DELETE', `/v1/claims/${claim.id}`);
  say(`released ${released.id} (${released.release_reason}); the pool refills`);
}
