import type { ProvisionInput } from '@cubicle/control-plane';
import type { Placement } from './placement.js';

/** What a Pod or VMI is built from: the provision input without its signal, plus placement. */
export type SandboxTemplate = Omit<ProvisionInput, 'signal'> & { placement?: Placement };

/** Kubernetes quantities from the pool's millicores and MiB (requests = limits: Guaranteed QoS). */
export const resourcesOf = (t: Pick<SandboxTemplate, 'cpuMillis' | 'memoryMb'>) => ({
  cpu: `${t.cpuMillis}m`,
  memory: `${t.memoryMb}Mi`,
});

/** Variables Cubicle sets itself; a pool's env cannot override them. */
export const RESERVED_ENV = /^CUBICLE_GUEST_/;

/** poolEnvEntries: the pool's non-secret env as sorted name/value pairs, reserved names dropped. */
export function poolEnvEntries(env: Record<string, string>): [string, string][] {
  return Object.entries(env)
    .filter(([name]) => !RESERVED_ENV.test(name))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
