// Where a benchmark's CPU went, by kind of process: a snapshot of every process's CPU time from
// /proc, and the difference of two snapshots grouped by a readable name (postgres, redis-server,
// the guest daemon, the worker, …). A process that exited in between is counted in its parent
// (the kernel adds a reaped child's time to the parent's cutime/cstime), so a run's short-lived
// programs show up as "children of" whoever started them.
import { readdirSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** nameOf names a process: its command, or for node the script it runs. */
function nameOf(pid, comm) {
  if (comm !== 'node' && comm !== 'MainThread') return comm;
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const script = argv.slice(1).find((a) => !a.startsWith('-'));
    if (!script) return 'node';
    // apps/api/dist/main.js → api; packages/driver-guest/dist/… → driver-guest
    const parts = script.split('/');
    const at = parts.findIndex((p) => p === 'apps' || p === 'packages');
    return at >= 0 && parts[at + 1] ? `node:${parts[at + 1]}` : `node:${basename(script)}`;
  } catch {
    return 'node';
  }
}

/** statFields: the fields of a /proc stat line after the command name (utime is [11]). */
function statFields(path) {
  const stat = readFileSync(path, 'utf8');
  return {
    comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
    f: stat.slice(stat.lastIndexOf(')') + 2).split(' '),
  };
}

/**
 * threadCpu: CPU ms of a process's main thread (its JavaScript, for node) and of its other
 * threads together (V8's background compilers and GC, libuv's pool), from schedstat (µs).
 */
export function threadCpu(pid) {
  let main = 0;
  let others = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const ns = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      if (tid === String(pid)) main += ns / 1e6;
      else others += ns / 1e6;
    } catch {
      // the thread ended while being read
    }
  }
  return { main, others };
}

/** cpuSnapshot reads every process's own and reaped-children CPU time (ms), by pid. */
export function cpuSnapshot() {
  const snapshot = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const { comm, f } = statFields(`/proc/${entry}/stat`);
      snapshot.set(entry, {
        name: nameOf(entry, comm),
        ppid: f[1],
        start: f[19],
        own: (Number(f[11]) + Number(f[12])) * TICK_MS,
        children: (Number(f[13]) + Number(f[14])) * TICK_MS,
      });
    } catch {
      // exited while being read
    }
  }
  return snapshot;
}

/**
 * cpuSpent is the CPU (ms) spent between two snapshots, by process name, largest first; a
 * process's reaped children are their own entry ("children of NAME"). Entries under 1 % of the
 * total are left out.
 */
export function cpuSpent(before, after) {
  const spent = new Map();
  const add = (name, ms) => ms > 0 && spent.set(name, (spent.get(name) ?? 0) + ms);
  for (const [pid, now] of after) {
    const then = before.get(pid);
    const same = then && then.start === now.start;
    add(now.name, now.own - (same ? then.own : 0));
    add(`children of ${now.name}`, now.children - (same ? then.children : 0));
  }
  const total = [...spent.values()].reduce((a, b) => a + b, 0);
  return Object.fromEntries(
    [...spent]
      .filter(([, ms]) => ms >= total / 100)
      .sort((a, b) => b[1] - a[1])
      .map(([name, ms]) => [name, Math.round(ms)]),
  );
}

/**
 * treeCpuSpent is the CPU (ms) one process tree spent between two snapshots: `rootPid` and its
 * descendants (as `after` links them), each with its reaped children. On a machine shared with
 * other work this is the bench's own Postgres or API, where cpuSpent's names would add every
 * process of that name on the machine.
 */
export function treeCpuSpent(before, after, rootPid) {
  const inTree = new Set([String(rootPid)]);
  // Parents before children is not guaranteed by pid order: grow the set until it settles.
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, p] of after)
      if (!inTree.has(pid) && inTree.has(p.ppid)) {
        inTree.add(pid);
        grew = true;
      }
  }
  let ms = 0;
  for (const pid of inTree) {
    const now = after.get(pid);
    if (!now) continue;
    const then = before.get(pid);
    const same = then && then.start === now.start;
    ms += now.own - (same ? then.own : 0) + now.children - (same ? then.children : 0);
  }
  return ms;
}

/**
 * taskCpuMs: CPU ms a process has run, summed over its threads from /proc/PID/task/TID/schedstat
 * (nanoseconds), not stat's 10-ms ticks: a benchmark that divides a few hundred ms among
 * thousands of claims or events needs the digits the ticks truncate (each of Postgres's dozen
 * backends loses up to 10 ms per reading). A process that is gone reads 0; reaped children are
 * not included (schedstat has no such sum).
 */
export function taskCpuMs(pid) {
  let ns = 0;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      } catch {
        // the thread ended while being read
      }
    }
  } catch {
    return 0;
  }
  return ns / 1e6;
}

/** treePids: `rootPid` and its live descendants (with `match(name)` only, when given). */
export function treePids(rootPid, match = () => true) {
  const snapshot = cpuSnapshot();
  const inTree = new Set([String(rootPid)]);
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, p] of snapshot)
      if (!inTree.has(pid) && inTree.has(p.ppid)) {
        inTree.add(pid);
        grew = true;
      }
  }
  return [...inTree].filter((pid) => snapshot.has(pid) && match(snapshot.get(pid).name));
}

/** preciseCpuMs: taskCpuMs summed over pids (a set that stays alive over the measurement). */
export const preciseCpuMs = (pids) => pids.reduce((ms, pid) => ms + taskCpuMs(pid), 0);

/** preciseTreeSnapshot: taskCpuMs of every live process of a tree, by pid. */
export const preciseTreeSnapshot = (rootPid) =>
  new Map(treePids(rootPid).map((pid) => [pid, taskCpuMs(pid)]));

/**
 * preciseTreeSpent: CPU ms a tree spent between two preciseTreeSnapshots (a process started in
 * between counts from its start; one that ended in between is not counted: treeCpuSpent, to the
 * tick, has those).
 */
export function preciseTreeSpent(before, after) {
  let ms = 0;
  for (const [pid, now] of after) ms += Math.max(0, now - (before.get(pid) ?? 0));
  return ms;
}
