import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SandboxCgroup } from './sandbox-cgroup.js';

// Pausing a local desktop freezes its sandbox's whole cgroup: every process of it, the guest
// driver included (it lives inside the sandbox and answers nothing while frozen). Resuming is
// therefore always the host's business (the backend, in the worker), never a guest call.

/** Where a cgroup's freezer is and how it is driven: v1 `freezer.state`, v2 `cgroup.freeze`. */
export type FreezerFile =
  { version: 1; file: string } | { version: 2; file: string; events: string };

/** How long a freeze may take to settle (v1 passes FREEZING while tasks reach the fridge). */
const SETTLE_MS = 5_000;

/**
 * freezerOf finds a sandbox cgroup's freezer: v2 has one in every non-root cgroup; v1 only when
 * the sandbox joined the freezer hierarchy at start (sandboxes started before that cannot be
 * paused). Null when there is none.
 */
export function freezerOf(cgroup: SandboxCgroup): FreezerFile | null {
  if (cgroup.version === 2) {
    const dir = cgroup.paths[0]!;
    const file = join(dir, 'cgroup.freeze');
    return existsSync(file) ? { version: 2, file, events: join(dir, 'cgroup.events') } : null;
  }
  for (const dir of cgroup.paths) {
    const file = join(dir, 'freezer.state');
    if (existsSync(file)) return { version: 1, file };
  }
  return null;
}

/** parseFrozen reads v1 `freezer.state` (FROZEN) or v2 `cgroup.events` (`frozen 1`). */
export function parseFrozen(version: 1 | 2, text: string): boolean {
  return version === 1 ? text.trim() === 'FROZEN' : /^frozen 1$/m.test(text);
}

/** isFrozen tells whether the freezer has settled frozen (not merely asked to freeze). */
export async function isFrozen(freezer: FreezerFile): Promise<boolean> {
  const text = await readFile(freezer.version === 1 ? freezer.file : freezer.events, 'utf8');
  return parseFrozen(freezer.version, text);
}

/**
 * setFrozen freezes or thaws a cgroup and waits until the kernel says it has settled. Both are
 * idempotent (writing the state it is in is a no-op). Thawing is immediate; a freeze waits for
 * every task to stop, which takes a few milliseconds for a desktop.
 */
export async function setFrozen(freezer: FreezerFile, frozen: boolean): Promise<void> {
  const value = freezer.version === 1 ? (frozen ? 'FROZEN' : 'THAWED') : frozen ? '1' : '0';
  await writeFile(freezer.file, value);
  const deadline = Date.now() + SETTLE_MS;
  for (let attempt = 0; ; attempt += 1) {
    if ((await isFrozen(freezer)) === frozen) return;
    if (Date.now() > deadline)
      throw new Error(`the sandbox's cgroup did not ${frozen ? 'freeze' : 'thaw'} within 5 s`);
    // v1: a task stuck in an uninterruptible wait keeps the cgroup FREEZING; asking again retries.
    if (freezer.version === 1 && frozen) await writeFile(freezer.file, value);
    // A desktop settles within a millisecond or two: the first reads only yield (a timer's
    // 1 ms is ~10 ms on a loaded machine, measured), later ones back off to 50 ms.
    if (attempt < 20) await new Promise((resolve) => setImmediate(resolve));
    else await sleep(Math.min(2 ** (attempt - 20), 50));
  }
}
