// Desktop launcher benches: start time of a complete session, and the memory of an idle one.
import { spawn } from 'node:child_process';
import { open, readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { findSessionProcesses } from '../dist/desktop/session-processes.js';
import { startDesktop } from '../dist/desktop/start-desktop.js';
import { percentile } from './stats.mjs';

export const name = 'desktop';

const RUNS = 5;
/** When the goal's figure is taken: start-up allocations have settled. */
const IDLE_AFTER_MS = 3000;
/**
 * When it is taken again (`settled`): V8 shrinks the driver's heap some 10 s after start-up
 * (~5.5 MB of its RSS, measured), as it does for every desktop waiting in a pool.
 */
const SETTLED_AFTER_MS = 15_000;

/** idleOverTime takes the idle figures of `listPids()` at both moments. */
async function idleOverTime(listPids) {
  await sleep(IDLE_AFTER_MS);
  const figures = await idleFigures(await listPids());
  await sleep(SETTLED_AFTER_MS - IDLE_AFTER_MS);
  const { value, pss_mb, distinct_mb } = await idleFigures(await listPids());
  return { ...figures, settled: { after_s: SETTLED_AFTER_MS / 1000, value, pss_mb, distinct_mb } };
}

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

const PAGE_KB = 4;

/**
 * residentFrames adds to `frames` the physical page frames `pid` has resident, read from
 * /proc/PID/pagemap (PFNs need root; without it they read as 0 and the set stays empty).
 * Mappings with no resident pages are skipped: V8 reserves gigabytes it never touches.
 */
async function residentFrames(pid, frames) {
  const smaps = await readFile(`/proc/${pid}/smaps`, 'utf8').catch(() => '');
  const pagemap = await open(`/proc/${pid}/pagemap`, 'r').catch(() => null);
  if (!pagemap) return;
  try {
    let range = null;
    for (const line of smaps.split('\n')) {
      const head = /^([0-9a-f]+)-([0-9a-f]+) /.exec(line);
      if (head) range = [parseInt(head[1], 16) / 4096, parseInt(head[2], 16) / 4096];
      const rss = /^Rss:\s+(\d+) kB/.exec(line);
      if (!rss || !range || rss[1] === '0') continue;
      const pages = range[1] - range[0];
      const buffer = Buffer.alloc(pages * 8);
      await pagemap.read(buffer, 0, buffer.length, range[0] * 8);
      for (let i = 0; i < pages; i += 1) {
        const entry = buffer.readBigUInt64LE(i * 8);
        if (entry >> 63n === 1n) frames.add(entry & ((1n << 55n) - 1n));
      }
    }
  } finally {
    await pagemap.close();
  }
}

async function comm(pid) {
  return (await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '?')).trim();
}

/**
 * idleFigures sums RSS and PSS of `pids`, with RSS per command name, and counts the distinct
 * physical pages they have resident (`distinct_mb`): the RSS sum counts a library page once per
 * process mapping it, PSS charges part of it to unrelated processes of this machine (the api
 * and worker share the node binary), while the distinct count is what the desktop holds when
 * it is alone, as in its own Pod. The goal is stated on the RSS sum (`value`).
 */
async function idleFigures(pids) {
  const byProcess = {};
  const frames = new Set();
  let total = 0;
  let pss = 0;
  for (const pid of pids) {
    const kb = await rssKb(pid);
    pss += await pssKb(pid);
    await residentFrames(pid, frames);
    const key = await comm(pid);
    byProcess[key] = Math.round(((byProcess[key] ?? 0) + kb / 1024) * 10) / 10;
    total += kb;
  }
  return {
    value: Math.round((total / 1024) * 10) / 10,
    pss_mb: Math.round((pss / 1024) * 10) / 10,
    distinct_mb: Math.round(((frames.size * PAGE_KB) / 1024) * 10) / 10,
    processes: pids.length,
    by_process: byProcess,
  };
}

/**
 * imageIdle measures a desktop started the way the sandbox image starts it: the cubicle-desktop
 * launcher executed through its shebang (which carries the driver's V8 flags) hosting the driver
 * in-process. The launcher is counted too: in a Pod it is part of the desktop.
 */
async function imageIdle() {
  const cli = fileURLToPath(new URL('../dist/desktop/cli.js', import.meta.url));
  // As the kernel runs a script: the interpreter, the rest of the shebang line as one argument.
  const shebang = (await readFile(cli, 'utf8')).split('\n')[0].slice(2);
  const [interpreter, ...rest] = shebang.split(' ');
  const launcher = spawn(interpreter, [rest.join(' '), cli, 'start', '--daemon', 'in-process'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  try {
    const line = await new Promise((resolve, reject) => {
      launcher.once('exit', (code) => reject(new Error(`cubicle-desktop exited (${code})`)));
      createInterface({ input: launcher.stdout }).once('line', resolve);
    });
    const { id } = JSON.parse(line);
    return await idleOverTime(async () => {
      const pids = await findSessionProcesses(id, new Set());
      return [launcher.pid, ...pids.filter((pid) => pid !== launcher.pid)];
    });
  } finally {
    const exited = new Promise((resolve) => launcher.once('exit', resolve));
    launcher.kill('SIGTERM');
    await exited;
  }
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
    // An idle desktop is one nobody is using.
    emit({
      bench: 'idle_desktop_rss_mb',
      daemon: 'child',
      ...(await idleOverTime(() => session.listProcesses())),
    });
  } finally {
    await session.stop();
  }
  emit({ bench: 'idle_desktop_rss_mb', daemon: 'image', ...(await imageIdle()) });
}
