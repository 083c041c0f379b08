import { readdir, readFile, rmdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sandboxParentDirs } from './sandbox-cgroup.js';

/**
 * The CPU weight each sandbox adds to the directory that holds them: one ordinary process's worth
 * (v1 cpu.shares 1024, v2 cpu.weight 100, the kernel's defaults). Left at the default, the
 * parent weighed as one process however many desktops ran under it, so on a busy host every
 * desktop together got the share of a single test worker (a profile's apply took 197–798 ms
 * there against 161–298 ms in the root group; 8 concurrent first actions waited on it).
 */
const PER_SANDBOX = {
  1: { file: 'cpu.shares', unit: 1024, max: 262_144 },
  2: { file: 'cpu.weight', unit: 100, max: 10_000 },
} as const;

const children = async (dir: string) =>
  (await readdir(dir, { withFileTypes: true }).catch(() => [])).filter((e) => e.isDirectory());

/**
 * weighSandboxParent sets `dir`'s CPU weight to one process's worth per sandbox cgroup in it
 * (at least one). Called after a sandbox's cgroup is made or removed; concurrent callers may
 * write a count one off, which the next call corrects.
 */
export async function weighSandboxParent(dir: string, version: 1 | 2): Promise<number | null> {
  const { file, unit, max } = PER_SANDBOX[version];
  const count = (await children(dir)).length;
  const weight = Math.min(max, unit * Math.max(1, count));
  try {
    await writeFile(join(dir, file), String(weight));
    return weight;
  } catch {
    return null; // no cpu controller here (v1 memory/pids hierarchies) or not ours to write
  }
}

/**
 * sweepEmptySandboxCgroups removes sandbox cgroups in `dir` that hold no process and are older
 * than `minAgeMs`: those of sandboxes whose stop never ran (a process killed with -9, a test
 * run cut short). An empty young one may be a sandbox being started (made, not yet joined), so
 * it is left. A paused sandbox's frozen processes still count as members. Returns how many went.
 */
export async function sweepEmptySandboxCgroups(dir: string, minAgeMs: number): Promise<number> {
  let removed = 0;
  const now = Date.now();
  for (const entry of await children(dir)) {
    const leaf = join(dir, entry.name);
    const info = await stat(leaf).catch(() => null);
    if (!info || now - info.ctimeMs < minAgeMs) continue;
    const procs = await readFile(join(leaf, 'cgroup.procs'), 'utf8').catch(() => null);
    if (procs === null || procs.trim() !== '') continue;
    // EBUSY: a process joined since the read; ENOENT: another sweeper was first.
    if (
      await rmdir(leaf).then(
        () => true,
        () => false,
      )
    )
      removed += 1;
  }
  return removed;
}

/** How old an empty sandbox cgroup must be before a sweep takes it (a start joins in ms). */
const ABANDONED_AFTER_MS = 10 * 60_000;
/** Sweeps run at most this often per process: a listing of a few hundred directories. */
const SWEEP_EVERY_MS = 5 * 60_000;
let lastSweep = 0;

/**
 * tendSandboxParents sweeps abandoned sandbox cgroups (at most every few minutes) and reweighs
 * the parents; errors are swallowed, since neither may stand between a desktop and its start or stop.
 */
export async function tendSandboxParents(): Promise<void> {
  const sweep = Date.now() - lastSweep >= SWEEP_EVERY_MS;
  if (sweep) lastSweep = Date.now();
  for (const { version, controller, dir } of sandboxParentDirs()) {
    try {
      if (sweep) await sweepEmptySandboxCgroups(dir, ABANDONED_AFTER_MS);
      if (version === 2 || controller === 'cpu') await weighSandboxParent(dir, version);
    } catch {
      /* best effort */
    }
  }
}
