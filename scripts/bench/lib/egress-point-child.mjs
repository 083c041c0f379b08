// The egress point under benchmark, in a process of its own so its CPU time can be read from
// /proc alone (scripts/bench/egress.mjs). argv: the @cubicle/egress dist to run (a copy of an
// older build for an A/B in one run), desktop id, upstream DNS, policy JSON, guard CIDRs, the
// egress relay's path ('' for Node's own copy) and optionally a JSON file
// {ca, upstreamCa, injections} (--inject: credentials at egress).
// Prints {"netnsPath", "relayed"} when ready and {"denied":[…]} per batch; detaches and exits on
// SIGTERM.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist, desktopId, upstreamDns, policyJson, guard, relay, credentialsFile] =
  process.argv.slice(2);
const { EgressPoint } = await import(pathToFileURL(join(dist, 'index.js')).href);
const credentials = credentialsFile ? JSON.parse(readFileSync(credentialsFile, 'utf8')) : null;
const out = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);

const point = await EgressPoint.start({
  upstreamDns: [upstreamDns],
  upstreamGuard: guard.split(','),
  ...(relay ? { relay } : {}),
  ...(credentials && { credentials: { ca: credentials.ca, upstreamCa: credentials.upstreamCa } }),
  report: (batch) =>
    out({
      denied: batch
        .filter((d) => d.verdict !== 'allowed')
        .map((d) => ({
          ip: d.ip,
          port: d.port,
          count: d.count,
          reportedAt: Date.now(),
        })),
    }),
});
const network = await point.attach(desktopId, JSON.parse(policyJson), {
  injections: credentials?.injections ?? [],
});
out({ netnsPath: network.netnsPath, relayed: point.relayed });
for (const signal of ['SIGTERM', 'SIGINT'])
  process.on(signal, async () => {
    await point.detach(desktopId);
    await point.close();
    process.exit(0);
  });
