#!/usr/bin/env node
// npm run bench:claim -- --json
// Claim latency from a warm pool of real desktops at 32 concurrent clients, measured by the
// clients over real HTTP. Each round claims every warm sandbox at once, then releases them and
// waits for the pool to refill and its new desktops to settle (10 s, then a quiet second). The
// first round runs on a freshly started API (code not yet compiled by V8, statements not yet
// prepared on each connection): it is reported apart (`first_round_*`) and the percentiles are
// of the rounds after it. Prints one JSON line.
import { log, percentile, round, startStack, waitQuiet } from './lib/stack.mjs';

const args = process.argv.slice(2);
const concurrency = Number(args[args.indexOf('--concurrency') + 1]) || 32;
const rounds = Number(args[args.indexOf('--rounds') + 1]) || 6;
// `--secrets N`: rounds alternate between plain claims and claims carrying N secrets (64-byte
// values) in the request, on the same stack, so both see the same machine; the figures with
// secrets (`secrets_*`) must stay those of the warm fast path (issue 12: within 10 %).
const secretCount = args.includes('--secrets')
  ? Number(args[args.indexOf('--secrets') + 1]) || 2
  : 0;
const claimBody = (withSecrets) => ({
  wait_seconds: 0,
  ...(withSecrets
    ? {
        secrets: Object.fromEntries(
          Array.from({ length: secretCount }, (_, i) => [
            `BENCH_SECRET_${i}`,
            `v${i}-${Math.random().toString(36).slice(2)}`.padEnd(64, 'x'),
          ]),
        ),
      }
    : {}),
});

const stack = await startStack();
try {
  const spec = { image: 'local', autoscaling: { min: 0, initial: concurrency, max: concurrency } };
  // While claims are measured the pool does not refill (initial 0): on a small machine, desktops
  // booting beside the API would measure the CPU, not the claim path. Between rounds it refills.
  const hold = { ...spec, autoscaling: { ...spec.autoscaling, initial: 0 } };
  log(`warming ${concurrency} desktops…`);
  const warmSeconds = await stack.warmPool('bench', spec, concurrency);
  await stack.call('PUT', '/v1/pools/bench', hold);
  log(`warm in ${warmSeconds.toFixed(1)} s`);
  const client = await stack.httpClient(concurrency);
  const latencies = [];
  const secretLatencies = [];
  const firstRound = [];
  let doubleClaims = 0;
  let notFromWarm = 0;
  for (let r = 0; r < rounds; r++) {
    if (r > 0) {
      await stack.call('PUT', '/v1/pools/bench', spec);
      // Also until the last round's desktops are destroyed: that work would measure the CPU.
      await stack.waitFor(
        async () => {
          const { counts } = (await stack.call('GET', '/v1/pools/bench')).body;
          return counts.warm >= concurrency && counts.releasing === 0;
        },
        600_000,
        'refill',
      );
      await stack.call('PUT', '/v1/pools/bench', hold);
    }
    // The newest desktops became warm just now: wait past their daemons' delayed GC (see waitQuiet).
    const busy = await waitQuiet({ settleMs: 10_000 });
    if (busy > 15)
      log(`the machine did not quiet down (${busy}% busy): this round measures that too`);
    // Clients of a control plane keep connections alive: open the 32 connections first, so the
    // figure is the claim's latency, not TCP and HTTP set-up after the refill's idle minutes.
    await Promise.all(Array.from({ length: concurrency }, () => client('GET', '/v1/version')));
    const withSecrets = secretCount > 0 && r % 2 === 0;
    const results = await Promise.all(
      Array.from({ length: concurrency }, async () => {
        const started = performance.now();
        const res = await client('POST', '/v1/pools/bench/claims', claimBody(withSecrets));
        return { ms: performance.now() - started, res };
      }),
    );
    const sandboxes = new Set();
    for (const { ms, res } of results) {
      if (r === 0) firstRound.push(ms);
      else if (withSecrets) secretLatencies.push(ms);
      else latencies.push(ms);
      if (res.status !== 201) notFromWarm++;
      const id = res.body.sandbox?.id;
      if (id && sandboxes.has(id)) doubleClaims++;
      if (id) sandboxes.add(id);
    }
    await Promise.all(results.map(({ res }) => stack.call('DELETE', `/v1/claims/${res.body.id}`)));
    const thisRound = results.map((x) => x.ms);
    log(
      `round ${r + 1}/${rounds}${withSecrets ? ' (with secrets)' : ''}: p50 ${round(percentile(thisRound, 50))} ms, max ${round(Math.max(...thisRound))} ms`,
    );
  }
  client.close();
  const line = {
    bench: 'claim',
    concurrency,
    secrets: secretCount,
    claims: latencies.length,
    p50_ms: round(percentile(latencies, 50)),
    p99_ms: round(percentile(latencies, 99)),
    max_ms: round(Math.max(...latencies)),
    ...(secretCount > 0
      ? {
          secrets_claims: secretLatencies.length,
          secrets_p50_ms: round(percentile(secretLatencies, 50)),
          secrets_p99_ms: round(percentile(secretLatencies, 99)),
          secrets_p50_ratio: round(percentile(secretLatencies, 50) / percentile(latencies, 50)),
        }
      : {}),
    first_round_p50_ms: round(percentile(firstRound, 50)),
    first_round_max_ms: round(Math.max(...firstRound)),
    double_claims: doubleClaims,
    not_from_warm: notFromWarm,
    warm_pool_fill_s: round(warmSeconds, 1),
  };
  process.stdout.write(`${JSON.stringify(line)}\n`);
} finally {
  await stack.stop();
}
