#!/usr/bin/env node
// npm run bench:reclaim -- --json
// Seconds from a claim's expiry to its release by the worker's sweep, over claims with a 2 s
// TTL taken from a warm pool of real desktops. Prints one JSON line.
import { log, percentile, round, startStack } from './lib/stack.mjs';

const args = process.argv.slice(2);
const claims = Number(args[args.indexOf('--claims') + 1]) || 16;

const stack = await startStack();
try {
  log(`warming ${claims} desktops…`);
  await stack.warmPool(
    'reclaim',
    { image: 'local', autoscaling: { min: 0, initial: claims, max: claims } },
    claims,
  );
  // No refill while measuring: this bench is about the sweep, not about desktops starting beside it.
  await stack.call('PUT', '/v1/pools/reclaim', {
    image: 'local',
    autoscaling: { min: 0, initial: 0, max: claims },
  });
  const made = await Promise.all(
    Array.from({ length: claims }, () =>
      stack.call('POST', '/v1/pools/reclaim/claims', { ttl_seconds: 2, wait_seconds: 0 }),
    ),
  );
  const ids = made.map((m) => m.body.id);
  await stack.waitFor(
    async () =>
      (await stack.db.claim.count({ where: { id: { in: ids }, status: 'released' } })) ===
      ids.length,
    60_000,
    'reclaims',
  );
  const rows = await stack.db.claim.findMany({ where: { id: { in: ids } } });
  const delays = rows.map((r) => (r.releasedAt.getTime() - r.expiresAt.getTime()) / 1000);
  const reasons = [...new Set(rows.map((r) => r.releaseReason))];
  process.stdout.write(
    `${JSON.stringify({ bench: 'reclaim', claims: rows.length, p50_s: round(percentile(delays, 50), 3), p99_s: round(percentile(delays, 99), 3), reasons })}\n`,
  );
} finally {
  await stack.stop();
}
