// Desktop launcher benches: start time of a complete session, and the memory of an idle one.
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { startDesktop } from '../dist/desktop/start-desktop.js';
import { percentile } from './stats.mjs';

export const name = 'desktop';

const RUNS = 5;

async function rssKb(pid) {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
}

// PSS splits shared pages (libc, the node binary) between the processes mapping them: the
// desktop's real share of memory, next to the RSS sum the goal is stated in.
async function pssKb(pid) {
  const rollup = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8').catch(() => '');
  return Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0);
}

async function comm(pid) {
  return (await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '?')).trim();
}

export async function run(emit) {
  // The driver runs as its own process (as in a sandbox image) so it is counted like the rest.
  for (const daemon of ['in-process', 'child']) {
    const starts = [];
    const stops = [];
    for (let i = 0; i < RUNS; i += 1) {
      const session = await startDesktop({ daemon });
      starts.push(session.startMs);
      const t0 = performance.now();
      await session.stop();
      stops.push(performance.now() - t0);
    }
    emit({
      bench: 'desktop_start',
      daemon,
      runs: RUNS,
      p50_ms: percentile(starts, 50),
      p95_ms: percentile(starts, 95),
      stop_p50_ms: percentile(stops, 50),
    });
  }

  const session = await startDesktop({ daemon: 'child' });
  try {
    // Let start-up allocations settle; an idle desktop is one nobody is using.
    await sleep(3000);
    const pids = await session.listProcesses();
    const byProcess = {};
    let total = 0;
    let pss = 0;
    for (const pid of pids) {
      const kb = await rssKb(pid);
      pss += await pssKb(pid);
      const key = await comm(pid);
      byProcess[key] = Math.round(((byProcess[key] ?? 0) + kb / 1024) * 10) / 10;
      total += kb;
    }
    emit({
      bench: 'idle_desktop_rss_mb',
      value: Math.round((total / 1024) * 10) / 10,
      pss_mb: Math.round((pss / 1024) * 10) / 10,
      processes: pids.length,
      by_process: byProcess,
    });
  } finally {
    await session.stop();
  }
}
