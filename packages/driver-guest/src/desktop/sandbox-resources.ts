import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { OutputTail } from './output-tail.js';
import { sweepAbandonedSandboxCgroups } from './sandbox-cgroup-sweep.js';
import {
  derivedSandboxCgroup,
  readResourceEvents,
  removeSandboxCgroup,
  type SandboxCgroup,
  type SandboxResourceEvents,
} from './sandbox-cgroup.js';
import { SESSION_FILE, sessionDir, type SessionFile } from './session-registry.js';

/** Cgroups of the sandboxes this process started and has not stopped, by session id. */
export const liveCgroups = new Map<string, SandboxCgroup>();
/** The stdout/stderr tail of each sandbox this process started (see OutputTail). */
export const sandboxOutputs = new Map<string, OutputTail>();

/** What the cgroups of recently stopped sandboxes last reported (a stop removes the cgroup). */
const ended = new Map<string, SandboxResourceEvents>();
const ENDED_KEPT = 256;

/** cgroupOf finds sandbox `id`'s cgroup: ours, its session file's, or where we would put it. */
export async function cgroupOf(id: string): Promise<SandboxCgroup | null> {
  const live = liveCgroups.get(id);
  if (live) return live;
  const record = await readFile(join(sessionDir(id), SESSION_FILE), 'utf8')
    .then((text) => JSON.parse(text) as SessionFile)
    .catch(() => null);
  return (record?.id === id ? record.cgroup : undefined) ?? derivedSandboxCgroup(id);
}

/**
 * sandboxResourceEvents reports what the kernel counted for sandbox `id` (a session id): above
 * all `oomKills`, the processes its memory limit had killed inside it. Answers for a running
 * sandbox (from any process of this installation) and, in the process that stopped it, for a
 * recently stopped one; null when there is no cgroup (none could be made, or long gone).
 */
export async function sandboxResourceEvents(id: string): Promise<SandboxResourceEvents | null> {
  const cgroup = await cgroupOf(id);
  const live = cgroup ? await readResourceEvents(cgroup) : null;
  return live ?? ended.get(id) ?? null;
}

/** sandboxOutputTail is the last bytes (at most 64 KiB) sandbox `id` wrote to stdout/stderr. */
export function sandboxOutputTail(id: string): { text: string; storedBytes: number } | null {
  const tail = sandboxOutputs.get(id);
  return tail ? { text: tail.text(), storedBytes: tail.storedBytes } : null;
}

/**
 * releaseSandboxResources keeps the last events of sandbox `id`'s cgroup (for
 * sandboxResourceEvents), then kills what is left in it and removes it. Idempotent.
 */
export async function releaseSandboxResources(
  id: string,
  cgroup?: SandboxCgroup | null,
): Promise<void> {
  const found = cgroup ?? (await cgroupOf(id));
  liveCgroups.delete(id);
  sandboxOutputs.delete(id);
  if (!found) return;
  const last = await readResourceEvents(found);
  if (last) {
    ended.delete(id);
    ended.set(id, last);
    if (ended.size > ENDED_KEPT) ended.delete(ended.keys().next().value!);
  }
  await removeSandboxCgroup(found);
  await sweepAbandonedSandboxCgroups();
}
