#!/usr/bin/env node
// npm run bench:egress -- --json [--connects N] [--requests N] [--megabytes N] [--squid] [--inject]
//   [--no-webhook] [--no-node-copy] [--rounds N]
// The local egress point against going direct, in the same fake internet (the tests' own network
// namespace on documentation ranges: no packet leaves this machine), same run, same client code:
// TCP+TLS connection setup p50 (a new connection each, SNI to an allowed name), a 100 MB
// download, CPU of the egress point per 1,000 HTTP requests (a new connection each), and the
// time from a denied connection to its denial batch leaving the point. Direct and through are
// interleaved in rounds so both see the same machine load. Needs root (namespaces, nftables).
// The point moves spliced connections' bytes through the egress relay (scripts/tools/egress-relay,
// built here when missing: splice(2)); a second point on a link of its own measures Node's own
// copy, the path before the relay (`node_copy` figures; --no-node-copy leaves it out). The CPU of
// a point is its process's and its relay's.
// --baseline-dist DIR also runs a point from another build of @cubicle/egress (a copy of
// packages/egress/dist taken before a change) on a link of its own with the same relay binary,
// measured in the same rounds as side `baseline` (the A/B of a change in one sitting);
// --baseline-relay PATH gives it the relay binary built from its own source.
// --squid also measures Squid (intercept, SNI peek-and-splice) on a link of its own in the same
// rounds, the field-made alternative the README weighs the egress point against.
// --inject binds a credential to allowed.example.test and times HTTPS requests to it (a new
// connection each) direct, through the point (TLS terminated, header added) and, with --squid,
// through Squid ssl-bump adding the same header: requests/s and CPU per 1,000 of each proxy.
// Unless --no-webhook, a whole Cubicle (API, worker with its egress point, one desktop) then
// times each denial from the sandbox's attempt to the `egress.denied` webhook's arrival.
// Prints one JSON line: {"bench":"egress","connect_ratio_p50":…,"throughput_ratio":…,…}.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { effectivePolicy, makeInjectionCa } from '../../packages/egress/dist/index.js';
import {
  FAKE_DNS,
  FAKE_RANGES,
  startFakeInternet,
} from '../../test/support/fake-internet/fake-internet.ts';
import { hasSquid, startSquidPath } from './lib/squid-path.mjs';
import { ensureEgressRelay } from '../tools/egress-relay/tool.mjs';
import { denialToWebhook } from './lib/egress-webhook.mjs';
import { log, percentile, round } from './lib/stack.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) =>
  args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback;
const CONNECTS = option('--connects', 200);
const REQUESTS = option('--requests', 1000);
const MEGABYTES = option('--megabytes', 100);
// Connection setups go in rounds, each side in turn: more, smaller rounds spread a busy moment of
// a shared machine over every side rather than one (a direct p50 of 6.8 ms beside 3.4 through
// the point was seen with 4 rounds at load 14).
const ROUNDS = option('--rounds', 10);
const CLIENT = fileURLToPath(new URL('./lib/egress-client.mjs', import.meta.url));
const POINT = fileURLToPath(new URL('./lib/egress-point-child.mjs', import.meta.url));
const DIST = fileURLToPath(new URL('../../packages/egress/dist', import.meta.url));
const BASELINE_DIST = args.includes('--baseline-dist')
  ? args[args.indexOf('--baseline-dist') + 1]
  : null;
// The relay binary of that build (a relay built from its source): a point only uses a relay
// that speaks its protocol, so with this one's it would copy in Node.
const BASELINE_RELAY = args.includes('--baseline-relay')
  ? args[args.indexOf('--baseline-relay') + 1]
  : null;
const PATH = '/usr/sbin:/usr/bin:/sbin:/bin';
const CLOCK_TICK_MS = 10; // USER_HZ is 100 on Linux

if (process.getuid?.() !== 0)
  throw new Error('bench:egress needs root (network namespaces, nftables)');

/** client runs egress-client.mjs directly (netns null) or in the sandbox's namespace. */
function client(netns, ...clientArgs) {
  const argv = [process.execPath, CLIENT, ...clientArgs.map(String)];
  const [command, ...rest] = netns ? ['nsenter', `--net=${netns}`, ...argv] : argv;
  return new Promise((resolve, reject) =>
    execFile(command, rest, { env: { PATH }, maxBuffer: 16 << 20 }, (err, stdout, stderr) =>
      err
        ? reject(new Error(`${clientArgs[0]}: ${stderr || err.message}`))
        : resolve(JSON.parse(stdout)),
    ),
  );
}

const cpuOf = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * CLOCK_TICK_MS; // utime + stime
};
/** cpuMs is a process's CPU time plus its egress relay's (its child), if it has one. */
const cpuMs = (pid) => {
  let ms = cpuOf(pid);
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  for (const child of children ? children.split(' ') : []) {
    const comm = readFileSync(`/proc/${child}/comm`, 'utf8').trim();
    if (comm === 'egress-relay') ms += cpuOf(Number(child));
  }
  return ms;
};

const loadAtStart = Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
const internet = await startFakeInternet();
// --inject: one credential bound to allowed.example.test (the connect phase's api.example.test
// stays spliced), signed by one CA the point and Squid share.
const INJECT = args.includes('--inject');
const BOUND = 'allowed.example.test';
const HEADER_VALUE = 'Bearer bench-credential';
const scratch = mkdtempSync(join(tmpdir(), 'cubicle-bench-egress-'));
const injectCa = INJECT ? await makeInjectionCa('Cubicle bench egress CA') : null;
if (injectCa) {
  writeFileSync(join(scratch, 'inject-ca.pem'), injectCa.certPem);
  writeFileSync(
    join(scratch, 'credentials.json'),
    JSON.stringify({
      ca: injectCa,
      upstreamCa: internet.caPem,
      injections: [{ hosts: [BOUND], header: 'Authorization', value: HEADER_VALUE }],
    }),
    { mode: 0o600 },
  );
}
// Open, with one denied block to time denials against.
const policy = effectivePolicy(
  'none',
  { allow: [] },
  { mode: 'open', allow: [], deny: ['203.0.113.21/32'] },
  null,
);
const relayPath = await ensureEgressRelay({ log, link: false });
/**
 * startPoint runs an egress point process (`relay`: its relay's path, '' for Node's copy) from
 * the @cubicle/egress build in `dist`.
 */
function startPoint(tag, relay, dist = DIST) {
  const child = spawn(
    process.execPath,
    [
      POINT,
      dist,
      `benchegress${tag}-${process.pid}`,
      FAKE_DNS,
      JSON.stringify(policy),
      FAKE_RANGES.join(','),
      relay,
      ...(INJECT ? [join(scratch, 'credentials.json')] : []),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const denied = [];
  const lines = createInterface({ input: child.stdout });
  const ready = new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the egress point exited (${code})`)));
    lines.on('line', (line) => {
      const message = JSON.parse(line);
      if (message.netnsPath) resolve(message);
      if (message.denied) denied.push(...message.denied);
    });
  });
  return { child, denied, ready };
}
const stopPoint = async (child) => {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
};
const NODE_COPY = !args.includes('--no-node-copy');
const started = startPoint('', relayPath);
const nodeCopy = NODE_COPY ? startPoint('n', '') : null;
const baseline = BASELINE_DIST ? startPoint('b', BASELINE_RELAY ?? relayPath, BASELINE_DIST) : null;
const point = started.child;
const denied = started.denied;
let netns = '';
let squid = null;
try {
  const ready = await started.ready;
  if (!ready.relayed) throw new Error(`the egress relay did not start (${relayPath})`);
  netns = ready.netnsPath;
  const nodeCopyNetns = nodeCopy ? (await nodeCopy.ready).netnsPath : null;
  const baselineNetns = baseline ? (await baseline.ready).netnsPath : null;

  if (args.includes('--squid')) {
    if (!hasSquid()) throw new Error('--squid: install squid-openssl first');
    squid = await startSquidPath({
      dns: FAKE_DNS,
      caPem: internet.caPem,
      ...(injectCa && {
        bump: { host: BOUND, header: 'Authorization', value: HEADER_VALUE, ca: injectCa },
      }),
    });
  }
  const sides = [
    ['direct', null],
    ['egress', netns],
    ...(nodeCopy ? [['node_copy', nodeCopyNetns]] : []),
    ...(baseline ? [['baseline', baselineNetns]] : []),
    ...(squid ? [['squid', squid.netnsPath]] : []),
  ];
  // Each round starts with the next side, so every side is measured in every position: the side
  // right after another one was measured slower, whichever it was.
  const inTurn = (round) => [
    ...sides.slice(round % sides.length),
    ...sides.slice(0, round % sides.length),
  ];
  const pidOf = (side) =>
    ({
      egress: point.pid,
      node_copy: nodeCopy?.child.pid,
      baseline: baseline?.child.pid,
      squid: squid?.pid,
    })[side] ?? null;

  const perRound = Math.ceil(CONNECTS / ROUNDS);
  log(`connection setup: ${ROUNDS} rounds of ${perRound} each way`);
  const connect = Object.fromEntries(sides.map(([side]) => [side, []]));
  for (let round = 0; round < ROUNDS; round += 1)
    for (const [side, ns] of inTurn(round))
      connect[side].push(
        ...(
          await client(
            ns,
            'connect',
            perRound,
            '198.51.100.11',
            'api.example.test',
            internet.caPath,
          )
        ).ms,
      );

  // Best of four each way: one 100 MB transfer takes a third of a second, and on a shared machine
  // one of two still fell on a busy moment often enough to swing a side's figure by a third.
  const DOWNLOADS = 4;
  log(`${MEGABYTES} MB download, ${DOWNLOADS} times each way`);
  const url = `http://198.51.100.10/bytes/${MEGABYTES * 1024 * 1024}`;
  const mbps = Object.fromEntries(sides.map(([side]) => [side, []]));
  for (let round = 0; round < DOWNLOADS; round += 1)
    for (const [side, ns] of inTurn(round)) {
      const { bytes, seconds } = await client(ns, 'download', url);
      mbps[side].push(bytes / 1024 / 1024 / seconds);
    }

  // In rounds like the setups: run one after another, a side measured second was 10-20 % faster
  // whichever it was (two points, relay on and off, swapped: 265/299 and 381/443 requests/s).
  const requestRounds = Math.min(ROUNDS, sides.length);
  log(
    `${REQUESTS} requests each way in ${requestRounds} rounds (CPU of the point${squid ? ' and of Squid' : ''})`,
  );
  const requestSeconds = Object.fromEntries(sides.map(([side]) => [side, 0]));
  const cpuUsed = Object.fromEntries(sides.map(([side]) => [side, 0]));
  for (let round = 0; round < requestRounds; round += 1)
    for (const [side, ns] of inTurn(round)) {
      const pid = pidOf(side);
      const before = pid ? cpuMs(pid) : 0;
      const n = Math.ceil(REQUESTS / requestRounds);
      requestSeconds[side] += (
        await client(ns, 'requests', n, 'http://198.51.100.10/small')
      ).seconds;
      if (pid) cpuUsed[side] += cpuMs(pid) - before;
    }
  const requestsDone = Math.ceil(REQUESTS / requestRounds) * requestRounds;
  const cpuPer1k = Object.fromEntries(
    sides.map(([side]) => [side, (cpuUsed[side] * 1000) / requestsDone]),
  );

  const inject = {};
  if (INJECT) {
    log(`${REQUESTS} HTTPS requests to a bound host each way (TLS terminated, header added)`);
    for (const [side, ns] of sides) {
      const pid = pidOf(side);
      const before = pid ? cpuMs(pid) : 0;
      const ran = await client(
        ns,
        'https',
        REQUESTS,
        '198.51.100.10',
        BOUND,
        internet.caPath,
        join(scratch, 'inject-ca.pem'),
      );
      inject[side] = {
        requests_per_s: round(REQUESTS / ran.seconds, 0),
        ...(pid ? { cpu_ms_per_1k: round(((cpuMs(pid) - before) * 1000) / REQUESTS, 0) } : {}),
        header_added: ran.headerNames.includes('authorization'),
      };
    }
  }

  log('denials: 50 distinct destinations');
  const { attempts } = await client(netns, 'denials', 50, '203.0.113.21', 20000);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const toReport = attempts
    .map((a) => denied.find((d) => d.port === a.port)?.reportedAt - a.at)
    .filter((ms) => Number.isFinite(ms));

  // The points' processes are done; the whole Cubicle runs its own (in the worker).
  await stopPoint(point);
  if (nodeCopy) await stopPoint(nodeCopy.child);
  if (baseline) await stopPoint(baseline.child);
  const webhook = args.includes('--no-webhook')
    ? null
    : await denialToWebhook({ dns: FAKE_DNS, guard: FAKE_RANGES });

  const p50 = (values) => percentile(values, 50);
  const best = (values) => Math.max(...values);
  const perSide = (f) => Object.fromEntries(sides.map(([side]) => [side, f(side)]));
  const result = {
    bench: 'egress',
    connect_ratio_p50: round(p50(connect.egress) / p50(connect.direct)),
    // The floor every ratio is read against: the same client straight to the fake internet.
    floor_connect_p50_ms: round(p50(connect.direct)),
    floor_download_mb_per_s: round(best(mbps.direct), 0),
    throughput_ratio: round(best(mbps.egress) / best(mbps.direct)),
    denial_to_webhook_p50_ms: webhook ? round(p50(webhook.ms)) : null,
    cpu_ms_per_1k_requests: round(cpuPer1k.egress, 0),
    connect_p50_ms: perSide((side) => round(p50(connect[side]))),
    connect_p95_ms: perSide((side) => round(percentile(connect[side], 95))),
    download_mb_per_s: perSide((side) => round(best(mbps[side]), 0)),
    requests_per_s: perSide((side) => round(requestsDone / requestSeconds[side], 0)),
    ...(nodeCopy
      ? {
          node_copy_connect_ratio_p50: round(p50(connect.node_copy) / p50(connect.direct)),
          node_copy_throughput_ratio: round(best(mbps.node_copy) / best(mbps.direct)),
          node_copy_cpu_ms_per_1k_requests: round(cpuPer1k.node_copy, 0),
        }
      : {}),
    ...(baseline
      ? {
          baseline_connect_ratio_p50: round(p50(connect.baseline) / p50(connect.direct)),
          baseline_throughput_ratio: round(best(mbps.baseline) / best(mbps.direct)),
          baseline_cpu_ms_per_1k_requests: round(cpuPer1k.baseline, 0),
        }
      : {}),
    ...(squid
      ? {
          squid_connect_ratio_p50: round(p50(connect.squid) / p50(connect.direct)),
          squid_throughput_ratio: round(best(mbps.squid) / best(mbps.direct)),
          squid_cpu_ms_per_1k_requests: round(cpuPer1k.squid, 0),
        }
      : {}),
    ...(INJECT ? { inject } : {}),
    denial_to_report_p50_ms: round(p50(toReport)),
    denials_reported: toReport.length,
    ...(webhook
      ? { denial_to_webhook_p95_ms: round(percentile(webhook.ms, 95)), webhooks: webhook.ms.length }
      : {}),
    connects: connect.egress.length,
    megabytes: MEGABYTES,
    requests: REQUESTS,
    load_average_1m_start: round(loadAtStart),
    load_average_1m: round(Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0])),
  };
  if (args.includes('--json')) process.stdout.write(`${JSON.stringify(result)}\n`);
  else console.log(result);
} finally {
  await stopPoint(point);
  if (nodeCopy) await stopPoint(nodeCopy.child);
  if (baseline) await stopPoint(baseline.child);
  await squid?.stop();
  await internet.stop();
  rmSync(scratch, { recursive: true, force: true });
}
