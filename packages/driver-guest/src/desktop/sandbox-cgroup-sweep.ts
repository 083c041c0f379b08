import { readdir, readFile, rmdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { sandboxParentDirs } from './sandbox-cgroup.js';

// The directory that holds the sandboxes' cgroups keeps the kernel's default CPU weight on
// purpose: all desktops together weigh as one process beside the control plane's own (API,
// worker, Postgres, Redis), so desktops booting or busy never starve a claim. Weighing it one
// process per sandbox was tried (bench:first-action, alternated twice on a quiet machine):
// sequential p50 197/201 ms without against 194/250 with, 8 at once p99 1,199/1,436 against
// 1,573/1,246 — no gain, and claims then compete with every warm desktop's refill. A CFS burst
// of one period's quota per sandbox gave nothing measurable either (175/207 without, 223/175 with).

/**
 * sweepEmptySandboxCgroups removes sandbox cgroups in `dir` that hold no process and are older
 * than `minAgeMs`: those of sandboxes whose stop never ran (a process killed with -9, a run cut
 * short, an exit hook that could only kill). An empty young one may be a sandbox being started
 * (made, not yet joined), so it is left. A paused sandbox's frozen processes still count as
 * members. Returns how many went.
 */
export async function sweepEmptySandboxCgroups(dir: string, minAgeMs: number): Promise<number> {
  let removed = 0;
  const now = Date.now();
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries.filter((e) => e.isDirectory())) {
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
 * sweepAbandonedSandboxCgroups runs the sweep over every hierarchy's sandbox directory, at most
 * every few minutes per process; errors are swallowed, since it may never stand between a
 * desktop and its start or stop.
 */
export async function sweepAbandonedSandboxCgroups(): Promise<void> {
  if (Date.now() - lastSweep < SWEEP_EVERY_MS) return;
  lastSweep = Date.now();
  for (const { dir } of sandboxParentDirs()) {
    await sweepEmptySandboxCgroups(dir, ABANDONED_AFTER_MS).catch(() => 0);
  }
}
