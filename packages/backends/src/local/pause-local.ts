import { AppError } from '@cubicle/contract/errors';
import { pauseSandbox, resumeSandbox, SandboxFreezeUnsupported } from '@cubicle/driver-guest';

/**
 * localFreezer pauses and resumes a local desktop by freezing its sandbox's whole cgroup (v1
 * freezer or v2 cgroup.freeze, whichever the machine has). The guest driver is inside the sandbox
 * and freezes with it, so resuming is this host-side call's job, never the guest's. A desktop
 * without a freezer (no cgroups here, or started before sandboxes joined one) is refused with
 * `not_supported_by_backend`.
 */
export function localFreezer(desktopId: (sandboxId: string) => string) {
  const refused = (err: unknown): never => {
    if (err instanceof SandboxFreezeUnsupported)
      throw new AppError('not_supported_by_backend', err.message, { backend: 'local' });
    throw err;
  };
  return {
    pause: (sandboxId: string) => pauseSandbox(desktopId(sandboxId)).catch(refused),
    resume: (sandboxId: string) => resumeSandbox(desktopId(sandboxId)).catch(refused),
  };
}
