// Start-up time and idle memory of a sandboxed desktop (the local backend's) against the
// unsandboxed `child` mode, alternating so machine load hits both alike. Prints one JSON line.
// Usage: node packages/driver-guest/bench/sandbox-start.mjs [--rounds N]   (build the package first)
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

const { startDesktop } = await import(new URL('../dist/index.js', import.meta.url).href);
const at = process.argv.indexOf('--rounds');
const rounds = at > 0 ? Number(process.argv[at + 1]) || 5 : 5;
const rssMb = (pids) => {
  let kb = 0;
  for (const pid of pids) {
    try {
      kb += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      /* exited */
    }
  }
  return Math.round(kb / 1024);
};
const runs = { child: [], sandbox: [] };
for (let i = 0; i < rounds; i += 1) {
  for (const mode of ['child', 'sandbox']) {
    const started = performance.now();
    const session = await startDesktop({ daemon: mode });
    const ms = performance.now() - started;
    await sleep(3000); // idle: after start-up garbage is collected
    const pids = await session.listProcesses();
    runs[mode].push({ ms, rss: rssMb(pids), processes: pids.length });
    await session.stop();
  }
}
const median = (values) => values.slice().sort((a, b) => a - b)[Math.floor(values.length / 2)];
const summary = Object.fromEntries(
  Object.entries(runs).map(([mode, list]) => [
    mode,
    {
      start_ms_median: Math.round(median(list.map((r) => r.ms))),
      idle_rss_mb_median: median(list.map((r) => r.rss)),
      processes: list[0].processes,
    },
  ]),
);
console.log(JSON.stringify({ bench: 'sandbox-start', rounds, ...summary }));
