// Process bookkeeping through /proc: identity (pid + start time), liveness that treats zombies as
// gone (PID 1 on our machines does not reap orphans), descendants, and a precise stop sequence.
// Nothing here looks processes up by name.
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** How a process ended, as reported by Node's `exit` event. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

interface ProcStat {
  state: string;
  ppid: number;
  pgrp: number;
  startTime: string;
}

function readStat(pid: number): ProcStat | undefined {
  let raw: string;
  try {
    raw = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name sits in parentheses and may itself contain spaces or parentheses.
  const fields = raw.slice(raw.lastIndexOf(')') + 2).split(' ');
  return {
    state: fields[0] ?? '?',
    ppid: Number(fields[1]),
    pgrp: Number(fields[2]),
    startTime: fields[19] ?? '',
  };
}

/** processStartTime returns the kernel start time of `pid` (clock ticks since boot), used with the pid as its identity. */
export function processStartTime(pid: number): string | undefined {
  return readStat(pid)?.startTime;
}

/**
 * isRunning reports whether `pid` exists and is not a zombie; with `startTime` it also checks that
 * the pid was not reused by another process since it was recorded.
 */
export function isRunning(pid: number, startTime?: string): boolean {
  if (!Number.isInteger(pid) || pid <= 1) return false;
  const stat = readStat(pid);
  if (!stat) return false;
  if (stat.state === 'Z' || stat.state === 'X') return false;
  return startTime === undefined || stat.startTime === startTime;
}

/** processCwd is the working directory of `pid` (postgres and redis chdir into their data dirs). */
export function processCwd(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return undefined;
  }
}

/** processArgv is the command line of `pid`, or an empty list when it is gone. */
export function processArgv(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return [];
  }
}

/** descendantPids lists every live process below `pid`; postgres backends leave its process group (setsid). */
export function descendantPids(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (!stat) continue;
    const list = children.get(stat.ppid) ?? [];
    list.push(Number(entry));
    children.set(stat.ppid, list);
  }
  const found: number[] = [];
  const queue = [pid];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const child of children.get(next) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

function send(pid: number, signal: NodeJS.Signals, isGroup: boolean): void {
  try {
    process.kill(isGroup ? -pid : pid, signal);
  } catch {
    // Already gone (ESRCH) is the outcome we want.
  }
}

async function waitGone(pids: number[], timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (pids.every((pid) => !isRunning(pid))) return true;
    if (Date.now() >= deadline) return false;
    await sleep(25);
  }
}

export interface StopTarget {
  pid: number;
  /** Recorded start time; when it no longer matches, the pid belongs to someone else and is left alone. */
  startTime?: string | undefined;
  /** The first signal: SIGINT is postgres' fast shutdown, SIGTERM suits redis. */
  signal: NodeJS.Signals;
  /** Signal the whole process group (the process was started as a group leader). */
  isGroup?: boolean;
  /** Grace period before SIGKILL. */
  timeoutMs?: number;
}

/**
 * stopProcess signals one recorded process, waits until it is gone, and escalates to SIGKILL (for
 * the process, its group and every descendant seen on the way) after the grace period. It returns
 * once nothing of it runs; it is idempotent.
 */
export async function stopProcess(target: StopTarget): Promise<void> {
  const { pid, startTime, signal, isGroup = false, timeoutMs = 15_000 } = target;
  if (!isRunning(pid, startTime)) return;
  const seen = new Set(descendantPids(pid));
  send(pid, signal, isGroup);
  if (await waitGone([pid], timeoutMs)) {
    // A clean shutdown takes its children with it; give stragglers a moment before forcing them.
    if (await waitGone([...seen], 2_000)) return;
  }
  for (const child of descendantPids(pid)) seen.add(child);
  send(pid, 'SIGKILL', isGroup);
  for (const child of seen) send(child, 'SIGKILL', false);
  if (!(await waitGone([pid, ...seen], 5_000))) {
    throw new Error(`process ${pid} did not exit after SIGKILL`);
  }
}
