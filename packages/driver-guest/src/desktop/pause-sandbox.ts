import { cgroupOf } from './sandbox-resources.js';
import { freezerOf, isFrozen, setFrozen } from './sandbox-freezer.js';

/** Why a sandbox cannot be paused or resumed; the backend maps it to `not_supported_by_backend`. */
export class SandboxFreezeUnsupported extends Error {
  constructor(id: string) {
    super(
      `desktop ${id} has no cgroup freezer (no cgroup, or started before sandboxes joined one)`,
    );
    this.name = 'SandboxFreezeUnsupported';
  }
}

async function freezerFor(id: string) {
  const cgroup = await cgroupOf(id);
  const freezer = cgroup ? freezerOf(cgroup) : null;
  if (!freezer) throw new SandboxFreezeUnsupported(id);
  return freezer;
}

/**
 * pauseSandbox freezes every process of desktop session `id` (its cgroup: v1 freezer or v2
 * cgroup.freeze), the guest driver and VNC server included, and returns once the kernel reports
 * the cgroup frozen. Idempotent. Any process of this installation may call it (the cgroup is
 * recorded in the session file); resumeSandbox undoes it.
 */
export async function pauseSandbox(id: string): Promise<void> {
  await setFrozen(await freezerFor(id), true);
}

/** resumeSandbox thaws desktop session `id`; idempotent (a running sandbox stays running). */
export async function resumeSandbox(id: string): Promise<void> {
  await setFrozen(await freezerFor(id), false);
}

/** isSandboxPaused tells whether desktop session `id` is frozen; null without a freezer. */
export async function isSandboxPaused(id: string): Promise<boolean | null> {
  const cgroup = await cgroupOf(id);
  const freezer = cgroup ? freezerOf(cgroup) : null;
  return freezer ? isFrozen(freezer).catch(() => null) : null;
}

/**
 * thawBeforeStop thaws a sandbox about to be stopped, if it is frozen: a frozen task does not
 * die of SIGKILL under the v1 freezer until thawed, so stopping a paused desktop would wait out
 * every kill round. Best effort: a sandbox without a freezer (or gone) has nothing to thaw.
 */
export async function thawBeforeStop(id: string): Promise<void> {
  const cgroup = await cgroupOf(id).catch(() => null);
  const freezer = cgroup ? freezerOf(cgroup) : null;
  if (freezer) await setFrozen(freezer, false).catch(() => undefined);
}
