import type { KubernetesListObject } from '@kubernetes/client-node';
import { BACKGROUND } from '../kube/kube-objects.js';
import {
  createKubeSandboxBackend,
  type KubeBackendOptions,
  type KubeSandboxBackend,
  type SandboxObjectKind,
} from '../kube/kube-sandbox-backend.js';
import { buildCloudConfig } from './cloud-init.js';
import {
  egressPointDns,
  egressPointLookup,
  withProxyEnv,
  type EgressPointService,
} from '../kubernetes/egress-pod.js';
import { setVmiPaused } from './pause-vmi.js';
import {
  buildSandboxVmi,
  KUBEVIRT_API_VERSION,
  isVmiLive,
  vmiReadiness,
  type VirtualMachineInstance,
} from './vmi-spec.js';

// VMIs have no generated client: the custom-objects API reaches them by group/version/plural.
const [group, version] = KUBEVIRT_API_VERSION.split('/') as [string, string];
const plural = 'virtualmachineinstances';

/** vmisPath is the VirtualMachineInstance collection of a namespace. */
export const vmisPath = (namespace: string) =>
  `/apis/kubevirt.io/v1/namespaces/${encodeURIComponent(namespace)}/virtualmachineinstances`;

/**
 * createKubevirtBackend runs each sandbox as one VirtualMachineInstance; its Secret carries the
 * token and the cloud-init user data that starts the guest driver with it. Ready when the VMI
 * runs, has an interface address, and the guest's /healthz answers `ok`.
 */
export function createKubevirtBackend(
  options: KubeBackendOptions & {
    /**
     * The chart's egress point: the VMI's launcher Pod gets it as resolver (the guest's DHCP
     * passes it on) and the guest's env its proxy (cloud-init). See withEgressPoint.
     */
    egressPoint?: EgressPointService;
  },
): KubeSandboxBackend {
  // The point's cluster IP, read once from its Service before the first VMI is built.
  const point = options.egressPoint
    ? egressPointLookup(options.client, options.namespace, options.egressPoint)
    : null;
  const kind: SandboxObjectKind<VirtualMachineInstance> = {
    backend: 'kubevirt',
    noun: 'VMI',
    api: (client, namespace) => {
      const vmis = { group, version, namespace, plural };
      const { custom } = client;
      return {
        path: vmisPath(namespace),
        list: (labelSelector, o) =>
          custom.listNamespacedCustomObject({ ...vmis, labelSelector }, o) as Promise<
            KubernetesListObject<VirtualMachineInstance>
          >,
        create: (body, o) => custom.createNamespacedCustomObject({ ...vmis, body }, o),
        read: (name, o) =>
          custom.getNamespacedCustomObject({ ...vmis, name }, o) as Promise<VirtualMachineInstance>,
        delete: (name, o) =>
          custom.deleteNamespacedCustomObject({ ...vmis, name, propagationPolicy: BACKGROUND }, o),
        patch: (name, body, o) => custom.patchNamespacedCustomObject({ ...vmis, name, body }, o),
      };
    },
    build: (template, namespace) => {
      const vmi = buildSandboxVmi(template, { namespace });
      if (!point) return vmi;
      return { ...vmi, spec: { ...vmi.spec, ...egressPointDns(point.current()) } };
    },
    secretExtras: (template, token) => ({
      userdata: buildCloudConfig({
        token,
        env: point ? withProxyEnv(template.env, point.current()) : template.env,
        egressCa: point?.current().trust?.caPem,
      }),
    }),
    readiness: vmiReadiness,
    isLive: isVmiLive,
  };
  const backend = createKubeSandboxBackend(kind, options);
  // Pause: the VMI's pause subresource (pause-vmi.ts); a Pod has none (the Kubernetes backend
  // leaves pause out, and the control plane answers not_supported_by_backend).
  return {
    ...backend,
    ...(point && { provision: point.reading(backend.provision) }),
    pause: (sandboxId) => setVmiPaused(options.client, options.namespace, sandboxId, true),
    resume: (sandboxId) => setVmiPaused(options.client, options.namespace, sandboxId, false),
  };
}
