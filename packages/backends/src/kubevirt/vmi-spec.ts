import {
  GUEST_PORT,
  guestSecretName,
  sandboxLabels,
  sandboxObjectName,
  VNC_PORT,
} from '../kube/names.js';
import type { KubernetesObject } from '@kubernetes/client-node';
import { resourcesOf, type SandboxTemplate } from '../kube/template.js';

export const KUBEVIRT_API_VERSION = 'kubevirt.io/v1';

/** The parts of a VirtualMachineInstance Cubicle writes and reads (no published TS types). */
export interface VirtualMachineInstance extends KubernetesObject {
  spec?: Record<string, unknown>;
  status?: {
    phase?: string;
    nodeName?: string;
    reason?: string;
    interfaces?: { name?: string; ipAddress?: string; ipAddresses?: string[] }[];
  };
}

export interface VmiSpecOptions {
  namespace: string;
}

/**
 * buildSandboxVmi is the VirtualMachineInstance of one sandbox: the pool image as a containerDisk,
 * cloud-init from the sandbox Secret (it carries the token; the VMI never does), the pod network
 * behind masquerade with the guest and VNC ports, a graphics device and a USB tablet (absolute
 * pointer, so VNC clicks land where they are aimed). Never restarted: a dead VM is a lost sandbox.
 */
export function buildSandboxVmi(
  template: SandboxTemplate,
  options: VmiSpecOptions,
): VirtualMachineInstance {
  const resources = resourcesOf(template);
  const placement = template.placement ?? {};
  return {
    apiVersion: KUBEVIRT_API_VERSION,
    kind: 'VirtualMachineInstance',
    metadata: {
      name: sandboxObjectName(template.sandboxId),
      namespace: options.namespace,
      labels: sandboxLabels({ ...template, state: 'warm' }),
    },
    spec: {
      terminationGracePeriodSeconds: 10,
      ...(placement.nodeSelector && { nodeSelector: { ...placement.nodeSelector } }),
      ...(placement.tolerations && { tolerations: placement.tolerations.map((t) => ({ ...t })) }),
      domain: {
        cpu: { cores: Math.max(1, Math.ceil(template.cpuMillis / 1000)) },
        memory: { guest: resources.memory },
        resources: { requests: { ...resources }, limits: { ...resources } },
        devices: {
          autoattachGraphicsDevice: true,
          inputs: [{ name: 'tablet', type: 'tablet', bus: 'usb' }],
          disks: [
            { name: 'containerdisk', disk: { bus: 'virtio' } },
            { name: 'cloudinitdisk', disk: { bus: 'virtio' } },
          ],
          interfaces: [
            {
              name: 'default',
              masquerade: {},
              ports: [
                { name: 'guest', port: GUEST_PORT, protocol: 'TCP' },
                { name: 'vnc', port: VNC_PORT, protocol: 'TCP' },
              ],
            },
          ],
        },
      },
      networks: [{ name: 'default', pod: {} }],
      volumes: [
        { name: 'containerdisk', containerDisk: { image: template.image } },
        {
          name: 'cloudinitdisk',
          cloudInitNoCloud: { secretRef: { name: guestSecretName(template.sandboxId) } },
        },
      ],
    },
  };
}

/** vmiReadiness: Running with an interface address; the guest's /healthz is checked after. */
export function vmiReadiness(
  vmi: VirtualMachineInstance | undefined,
):
  | { kind: 'ready'; ip: string }
  | { kind: 'waiting'; why: string }
  | { kind: 'failed'; why: string } {
  if (!vmi) return { kind: 'failed', why: 'the VMI is gone' };
  if (vmi.metadata?.deletionTimestamp) return { kind: 'failed', why: 'the VMI is being deleted' };
  const phase = vmi.status?.phase;
  if (phase === 'Failed' || phase === 'Succeeded')
    return {
      kind: 'failed',
      why: `the VMI ended (${phase}${vmi.status?.reason ? `: ${vmi.status.reason}` : ''})`,
    };
  if (phase !== 'Running') return { kind: 'waiting', why: `phase ${phase ?? 'Pending'}` };
  const iface =
    vmi.status?.interfaces?.find((i) => i.name === 'default') ?? vmi.status?.interfaces?.[0];
  const ip = iface?.ipAddress ?? iface?.ipAddresses?.[0];
  if (!ip) return { kind: 'waiting', why: 'no interface address yet' };
  return { kind: 'ready', ip: ip.replace(/\/\d+$/, '') };
}

/** isVmiLive: counts as a running sandbox for list() (not terminating, not finished). */
export function isVmiLive(vmi: VirtualMachineInstance): boolean {
  const phase = vmi.status?.phase;
  return !vmi.metadata?.deletionTimestamp && phase !== 'Failed' && phase !== 'Succeeded';
}
