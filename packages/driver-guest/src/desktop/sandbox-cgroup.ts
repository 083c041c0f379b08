import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** What one sandbox may use: the pool's cpu and memory, and a task count. */
export interface SandboxLimits {
  /** CPU time per wall time, in thousandths of a core (a pool's `cpu` × 1000). */
  cpuMillis: number;
  memoryMb: number;
  /** Processes and threads together. */
  pids: number;
}

/**
 * A sandbox's cgroup: the leaf directory of each v1 hierarchy it joins (cpu, cpuacct, memory,
 * pids, freezer; co-mounted ones once), or the one v2 directory. Recorded in the session file so another
 * process can read its events and remove it.
 */
export interface SandboxCgroup {
  version: 1 | 2;
  paths: string[];
}

/** What the kernel reports of a sandbox's resources (cumulative since it started). */
export interface SandboxResourceEvents {
  /** Processes the kernel's OOM killer ended inside the sandbox (its memory limit was reached). */
  oomKills: number;
  memoryLimitBytes: number | null;
  /** CPU time used by every process of the sandbox, in nanoseconds. */
  cpuUsageNs: number | null;
}

const ROOT = '/sys/fs/cgroup';
// freezer: no limits, but pausing a sandbox freezes its cgroup (sandbox-freezer.ts).
const V1_CONTROLLERS = ['cpu', 'cpuacct', 'memory', 'pids', 'freezer'] as const;
/** The CFS period; the quota is the pool's share of it. */
const CPU_PERIOD_US = 100_000;
/** The directory under the launcher's own cgroup that holds one cgroup per sandbox. */
const PARENT = 'cubicle';

/** parseProcCgroup reads /proc/<pid>/cgroup: controller (or '' for v2) → path. */
export function parseProcCgroup(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.trim().split('\n')) {
    const [, controllers, path] = /^\d+:([^:]*):(.*)$/.exec(line) ?? [];
    if (path === undefined) continue;
    for (const name of controllers!.split(',')) out.set(name, path);
  }
  return out;
}

/** limitFiles lists the files (relative to a controller's directory) and values to write. */
export function limitFiles(
  version: 1 | 2,
  controller: string,
  limits: SandboxLimits,
): [string, string][] {
  const quotaUs = Math.max(1000, Math.round((limits.cpuMillis * CPU_PERIOD_US) / 1000));
  const memory = String(limits.memoryMb * 1024 * 1024);
  if (version === 2)
    return [
      ['cpu.max', `${quotaUs} ${CPU_PERIOD_US}`],
      ['memory.max', memory],
      // No swap: the memory limit is the whole of what the sandbox holds.
      ['memory.swap.max', '0'],
      ['pids.max', String(limits.pids)],
    ];
  switch (controller) {
    case 'cpu':
      return [
        ['cpu.cfs_period_us', String(CPU_PERIOD_US)],
        ['cpu.cfs_quota_us', String(quotaUs)],
      ];
    case 'memory':
      // memsw (memory + swap) must be set after, and be at least, the memory limit.
      return [
        ['memory.limit_in_bytes', memory],
        ['memory.memsw.limit_in_bytes', memory],
      ];
    case 'pids':
      return [['pids.max', String(limits.pids)]];
    default:
      return [];
  }
}

/** The files that hold the CPU quota: written unlimited at creation, the quota once booted. */
const CPU_QUOTA_FILES: Record<string, string> = { 'cpu.cfs_quota_us': '-1', 'cpu.max': 'max' };

/** parseOomKills reads `oom_kill N` from v1 memory.oom_control or v2 memory.events. */
export function parseOomKills(text: string): number {
  return Number(/^oom_kill (\d+)$/m.exec(text)?.[1] ?? 0);
}

type Layout =
  | { version: 1; parents: { controller: string; dir: string }[] }
  | { version: 2; parents: string[] }
  | { version: null; reason: string };

let layout: Layout | undefined;
/** cgroupLayout finds where sandbox cgroups go: under this process's own cgroup(s). */
function cgroupLayout(): Layout {
  if (layout) return layout;
  const own = parseProcCgroup(readFileSync('/proc/self/cgroup', 'utf8'));
  if (existsSync(join(ROOT, 'cgroup.controllers'))) {
    // v2: a cgroup with processes cannot hand controllers to children (no internal processes),
    // so under our own cgroup only when it is free to; else under the root, which may.
    const self = own.get('') ?? '/';
    layout = { version: 2, parents: [...new Set([join(ROOT, self), ROOT])] };
    return layout;
  }
  const parents: { controller: string; dir: string }[] = [];
  const seen = new Set<string>();
  for (const controller of V1_CONTROLLERS) {
    const mount = join(ROOT, controller);
    if (!existsSync(join(mount, 'cgroup.procs')) || !own.has(controller)) continue;
    const real = realpathSync(mount); // cpu and cpuacct are often one hierarchy
    if (seen.has(real)) continue;
    seen.add(real);
    parents.push({ controller, dir: join(real, own.get(controller)!) });
  }
  layout = parents.some((p) => p.controller === 'memory')
    ? { version: 1, parents }
    : { version: null, reason: `no cgroup v1 memory controller or v2 hierarchy in ${ROOT}` };
  return layout;
}

/**
 * sandboxParentDirs lists the directories that hold one cgroup per sandbox (the `cubicle`
 * directory of each v1 hierarchy, or of each v2 candidate parent), whether or not they exist yet.
 */
export function sandboxParentDirs(): { version: 1 | 2; controller: string; dir: string }[] {
  const found = cgroupLayout();
  if (found.version === 1)
    return found.parents.map((p) => ({
      version: 1,
      controller: p.controller,
      dir: join(p.dir, PARENT),
    }));
  if (found.version === 2)
    return found.parents.map((p) => ({ version: 2, controller: '', dir: join(p, PARENT) }));
  return [];
}

let warned = false;
/** warnOnce says, once per process, that sandboxes run without resource limits, and why. */
function warnOnce(reason: string): void {
  if (warned) return;
  warned = true;
  process.emitWarning(
    `desktop sandboxes run WITHOUT cpu/memory/pids limits: ${reason}`,
    'CubicleSandboxLimits',
  );
}

const isPermission = (err: unknown) =>
  ['EACCES', 'EPERM', 'EROFS'].includes((err as NodeJS.ErrnoException).code ?? '');

async function writeIfPresent(file: string, value: string): Promise<void> {
  await writeFile(file, value).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err; // memsw/swap files exist only with swap accounting
  });
}

/**
 * createSandboxCgroup makes the cgroup of sandbox `id` under this process's own (v1: in each of
 * the cpu, cpuacct, memory and pids hierarchies; v2: one directory) with `limits` written (the
 * CPU quota only later, by applyCpuLimit once the desktop has booted), and
 * returns it; the launcher moves the sandbox's first process in before that process can fork
 * (joinSandboxCgroup). Where cgroups are missing or not ours to write (not root, no delegation)
 * it warns once per process and returns null: the sandbox then runs without limits.
 */
export async function createSandboxCgroup(
  id: string,
  limits: SandboxLimits,
): Promise<SandboxCgroup | null> {
  const found = cgroupLayout();
  if (found.version === null) {
    warnOnce(found.reason);
    return null;
  }
  try {
    if (found.version === 1) {
      const paths: string[] = [];
      for (const { controller, dir } of found.parents) {
        const leaf = join(dir, PARENT, id);
        await mkdir(leaf, { recursive: true });
        paths.push(leaf);
        for (const [file, value] of limitFiles(1, controller, limits))
          await writeIfPresent(join(leaf, file), CPU_QUOTA_FILES[file] ?? value);
      }
      return { version: 1, paths };
    }
    let lastError: unknown;
    for (const parent of found.parents) {
      try {
        const enable = '+cpu +memory +pids';
        await writeFile(join(parent, 'cgroup.subtree_control'), enable);
        await mkdir(join(parent, PARENT), { recursive: true });
        await writeFile(join(parent, PARENT, 'cgroup.subtree_control'), enable);
        const leaf = join(parent, PARENT, id);
        await mkdir(leaf, { recursive: true });
        for (const [file, value] of limitFiles(2, '', limits))
          await writeIfPresent(join(leaf, file), CPU_QUOTA_FILES[file] ?? value);
        return { version: 2, paths: [leaf] };
      } catch (err) {
        lastError = err;
      }
    }
    throw lastError;
  } catch (err) {
    if (!isPermission(err) && (err as NodeJS.ErrnoException).code !== 'EBUSY') throw err;
    warnOnce(`cannot create a cgroup (${(err as Error).message})`);
    return null;
  }
}

/**
 * applyCpuLimit writes the CPU quota a sandbox was created without. The launcher calls it once
 * the desktop is up, before anyone is handed the sandbox: booting the desktop (X server, buses,
 * the driver) is Cubicle's own work, and under a 1-core quota it took ~35 % longer on 2 idle
 * cores (sandbox-start bench: 791 against 643 ms median); memory and task limits hold from the
 * first process on.
 */
export async function applyCpuLimit(cgroup: SandboxCgroup, limits: SandboxLimits): Promise<void> {
  let dir = cgroup.paths[0];
  if (cgroup.version === 1) {
    // Only the cpu hierarchy's leaf has the quota (cpuacct may be mounted apart, read-only files).
    const found = cgroupLayout();
    const cpu = found.version === 1 ? found.parents.find((p) => p.controller === 'cpu') : undefined;
    dir = cpu && cgroup.paths.find((path) => path.startsWith(`${join(cpu.dir, PARENT)}/`));
  }
  if (!dir) return;
  const files = cgroup.version === 1 ? limitFiles(1, 'cpu', limits) : limitFiles(2, '', limits);
  for (const [file, value] of files)
    if (file in CPU_QUOTA_FILES) await writeIfPresent(join(dir, file), value);
}

/** joinSandboxCgroup moves process `pid` (and the children it forks later) into `cgroup`. */
export async function joinSandboxCgroup(cgroup: SandboxCgroup, pid: number): Promise<void> {
  for (const dir of cgroup.paths) await writeFile(join(dir, 'cgroup.procs'), String(pid));
}

/** cgroupPids lists the processes in a sandbox's cgroup (empty once it is gone). */
export async function cgroupPids(cgroup: SandboxCgroup): Promise<number[]> {
  const text = await readFile(join(cgroup.paths[0]!, 'cgroup.procs'), 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean).map(Number);
}

const controllerDir = (cgroup: SandboxCgroup, file: string) =>
  cgroup.version === 2 ? cgroup.paths[0]! : cgroup.paths.find((dir) => existsSync(join(dir, file)));

/** readResourceEvents reads the OOM kills, memory limit and CPU time of a sandbox's cgroup. */
export async function readResourceEvents(
  cgroup: SandboxCgroup,
): Promise<SandboxResourceEvents | null> {
  const read = async (file: string) => {
    const dir = controllerDir(cgroup, file);
    return dir ? readFile(join(dir, file), 'utf8').catch(() => null) : null;
  };
  const v2 = cgroup.version === 2;
  const oom = await read(v2 ? 'memory.events' : 'memory.oom_control');
  if (oom === null) return null; // removed
  const limit = (await read(v2 ? 'memory.max' : 'memory.limit_in_bytes'))?.trim();
  const cpu = v2
    ? /^usage_usec (\d+)$/m.exec((await read('cpu.stat')) ?? '')?.[1]
    : (await read('cpuacct.usage'))?.trim();
  return {
    oomKills: parseOomKills(oom),
    memoryLimitBytes: limit && /^\d+$/.test(limit) ? Number(limit) : null,
    cpuUsageNs: cpu ? Number(cpu) * (v2 ? 1000 : 1) : null,
  };
}

/**
 * removeSandboxCgroup kills whatever is still in the cgroup and removes its directories;
 * idempotent. A cgroup empties a moment after its last process is killed (exit is
 * asynchronous), hence the retries.
 */
export async function removeSandboxCgroup(cgroup: SandboxCgroup): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    for (const pid of await cgroupPids(cgroup)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    const left: string[] = [];
    for (const dir of cgroup.paths) {
      await rmdir(dir).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') left.push(dir);
      });
    }
    if (left.length === 0) return;
    await sleep(30);
  }
  throw new Error(`cgroup of the sandbox still busy: ${cgroup.paths.join(', ')}`);
}

/**
 * derivedSandboxCgroup is where this process would have made sandbox `id`'s cgroup: for a
 * sandbox whose session file is gone (an orphan found by its processes' marker).
 */
export function derivedSandboxCgroup(id: string): SandboxCgroup | null {
  const found = cgroupLayout();
  if (found.version === null) return null;
  const paths =
    found.version === 1
      ? found.parents.map((p) => join(p.dir, PARENT, id))
      : found.parents.map((p) => join(p, PARENT, id));
  const existing = paths.filter((p) => existsSync(p));
  return existing.length > 0 ? { version: found.version, paths: existing } : null;
}
