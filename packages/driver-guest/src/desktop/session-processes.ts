import { readdirSync, readFileSync } from 'node:fs';
import { readFile, readlink } from 'node:fs/promises';
import { setImmediate as yieldToLoop, setTimeout as sleep } from 'node:timers/promises';

/** MARKER_VAR tags every process of one desktop session through inherited environments. */
export const MARKER_VAR = 'CUBICLE_DESKTOP_ID';

export interface ProcInfo {
  pid: number;
  ppid: number;
  sid: number;
  pgid: number;
  state: string;
}

// /proc files are generated in memory: a synchronous read never waits on a disk, and costs a
// fraction of fs/promises' open + fstat + read + close through the thread pool (a scan of 107
// processes here: 5-9 ms of CPU against 19-25 ms).
export function readStatSync(pid: number): ProcInfo | null {
  try {
    const raw = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // The command name may contain spaces and parentheses: fields start after the last ')'.
    const rest = raw.slice(raw.lastIndexOf(')') + 2).split(' ');
    return {
      pid,
      state: rest[0] ?? '?',
      ppid: Number(rest[1]),
      pgid: Number(rest[2]),
      sid: Number(rest[3]),
    };
  } catch {
    return null;
  }
}

/** Processes read between two turns of the event loop during a scan of /proc. */
const SCAN_CHUNK = 128;

/**
 * forEachProcess calls `visit` with the pid of every process in /proc but ours, reading in
 * chunks of SCAN_CHUNK with a turn of the event loop between them: a machine of many desktops
 * has thousands of processes, and the worker that scans serves guest calls meanwhile.
 */
export async function forEachProcess(visit: (pid: number) => void): Promise<void> {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return;
  }
  let inChunk = 0;
  for (const name of names) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    if (++inChunk > SCAN_CHUNK) {
      inChunk = 1;
      await yieldToLoop();
    }
    visit(Number(name));
  }
}

/** environOf is a process's environment block, or null when it is gone or not ours to read. */
export function environOf(pid: number): Buffer | null {
  try {
    return readFileSync(`/proc/${pid}/environ`);
  } catch {
    return null;
  }
}

/**
 * processStartTime is when a live process started (clock ticks since boot, /proc stat field 22),
 * or null when it is gone or a zombie. A pid with the start time recorded at launch is that same
 * process, not a later one that reused the number.
 */
export async function processStartTime(pid: number): Promise<string | null> {
  try {
    const raw = await readFile(`/proc/${pid}/stat`, 'utf8');
    const rest = raw.slice(raw.lastIndexOf(')') + 2).split(' ');
    if (rest[0] === 'Z' || rest[0] === 'X') return null;
    return rest[19] ?? null;
  } catch {
    return null;
  }
}

/** isAlive is true for a process that exists and is not a zombie (PID 1 here reaps nothing). */
export async function isAlive(pid: number): Promise<boolean> {
  const info = readStatSync(pid);
  return info !== null && info.state !== 'Z' && info.state !== 'X';
}

/**
 * findSessionProcesses lists the live processes of one desktop: those whose environment carries
 * the session's marker (at-spi2-registryd and whatever else the session bus activates escape
 * our process groups, but inherit the environment), and those in
 * one of our sessions (`sids`: every component is started with setsid), which catches a
 * process that cleared its environment. Our own process is never listed.
 */
export async function findSessionProcesses(
  markerValue: string,
  sids: ReadonlySet<number>,
): Promise<number[]> {
  // NUL on both sides: the marker is one whole entry, not the tail of another variable.
  const needle = Buffer.from(`\0${MARKER_VAR}=${markerValue}\0`);
  const nul = Buffer.from([0]);
  const found: number[] = [];
  await forEachProcess((pid) => {
    const info = readStatSync(pid);
    if (!info || info.state === 'Z' || info.state === 'X') return;
    if (sids.has(info.sid)) {
      found.push(pid);
      return;
    }
    const environ = environOf(pid);
    if (environ && Buffer.concat([nul, environ]).includes(needle)) found.push(pid);
  });
  return found.sort((a, b) => a - b);
}

function signal(pid: number, sig: NodeJS.Signals) {
  try {
    process.kill(pid, sig);
  } catch {
    /* gone already */
  }
}

async function waitGone(pids: number[], ms: number): Promise<number[]> {
  const deadline = Date.now() + ms;
  let alive = pids;
  while (alive.length > 0 && Date.now() < deadline) {
    await sleep(10);
    alive = (await Promise.all(alive.map(async (pid) => ((await isAlive(pid)) ? pid : 0)))).filter(
      (pid) => pid !== 0,
    );
  }
  return alive;
}

/**
 * killSession stops every process of the session and returns the pids it saw. Processes are
 * signalled leaves first (those with no live child in the session), so each dies while its
 * parent still lives to reap it: an orphan would become a zombie of PID 1, which reaps nothing
 * here. Whatever ignores SIGTERM for `graceMs` gets SIGKILL, and the scan repeats until nothing
 * is left (a dying bus can still activate a service).
 */
export async function killSession(
  markerValue: string,
  groups: ReadonlySet<number>,
  graceMs = 1500,
): Promise<number[]> {
  const seen = new Set<number>();
  // A marked process in another pid namespace is a sandbox's PID 1 (bubblewrap's reaper, which
  // ignores SIGTERM from outside): SIGKILL ends it and with it everything in the sandbox.
  const ownNamespace = await readlink('/proc/self/ns/pid').catch(() => null);
  for (const pid of await findSessionProcesses(markerValue, groups)) {
    const ns = await readlink(`/proc/${pid}/ns/pid`).catch(() => null);
    if (ns && ownNamespace && ns !== ownNamespace) signal(pid, 'SIGKILL');
  }
  const deadline = Date.now() + graceMs;
  for (let round = 0; round < 50; round += 1) {
    const pids = await findSessionProcesses(markerValue, groups);
    if (pids.length === 0) break;
    pids.forEach((pid) => seen.add(pid));
    if (Date.now() > deadline) {
      for (const pgid of groups) signal(-pgid, 'SIGKILL');
      for (const pid of pids) signal(pid, 'SIGKILL');
      await waitGone(pids, 500);
      continue;
    }
    const parents = new Set(pids.map(readStatSync).flatMap((info) => (info ? [info.ppid] : [])));
    const leaves = pids.filter((pid) => !parents.has(pid));
    for (const pid of leaves.length > 0 ? leaves : pids) signal(pid, 'SIGTERM');
    await waitGone(leaves.length > 0 ? leaves : pids, Math.max(0, deadline - Date.now()));
  }
  // Group leaders that already exited may have left members we could not see (no marker).
  for (const pgid of groups) signal(-pgid, 'SIGKILL');
  return [...seen].sort((a, b) => a - b);
}
