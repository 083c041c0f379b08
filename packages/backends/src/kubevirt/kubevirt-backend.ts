import {
  createKubeSandboxBackend,
  type KubeBackendOptions,
  type KubeSandboxBackend,
  type SandboxObjectKind,
} from '../kube/kube-sandbox-backend.js';
import { buildCloudConfig } from './cloud-init.js';
import {
  buildSandboxVmi,
  isVmiLive,
  vmiReadiness,
  type VirtualMachineInstance,
} from './vmi-spec.js';

/** vmisPath is the VirtualMachineInstance collection of a namespace. */
export const vmisPath = (namespace: string) =>
  `/apis/kubevirt.io/v1/namespaces/${encodeURIComponent(namespace)}/virtualmachineinstances`;

/**
 * createKubevirtBackend runs each sandbox as one VirtualMachineInstance; its Secret carries the
 * token and the cloud-init user data that starts the guest driver with it. Ready when the VMI
 * runs, has an interface address, and the guest's /healthz answers `ok`.
 */
export function createKubevirtBackend(options: KubeBackendOptions): KubeSandboxBackend {
  const kind: SandboxObjectKind<VirtualMachineInstance> = {
    backend: 'kubevirt',
    noun: 'VMI',
    collectionPath: vmisPath,
    build: (template, namespace) => buildSandboxVmi(template, { namespace }),
    secretExtras: (template, token) => ({
      userdata: buildCloudConfig({ token, env: template.env }),
    }),
    readiness: vmiReadiness,
    isLive: isVmiLive,
  };
  return createKubeSandboxBackend(kind, options);
}
