// Minimal KubeVirt CRDs for the test API server. KubeVirt publishes no static CRD manifests (its
// operator generates them in Go), so these are ours: the group, version, kinds, names and scope
// of the real ones, with an open schema. Like the real VirtualMachineInstance, ours has no status
// subresource: status is written with a normal update.
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ApiextensionsV1Api,
  type KubeConfig,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';

// client-node's models use their own property names and drop unknown keys when serialising:
// 'x-kubernetes-preserve-unknown-fields' would vanish (and the API server prune every field).
const openSchema = {
  openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true },
};

function crd(kind: string, plural: string, shortNames: string[]): V1CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.kubevirt.io` },
    spec: {
      group: 'kubevirt.io',
      scope: 'Namespaced',
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List`, shortNames },
      versions: [{ name: 'v1', served: true, storage: true, schema: openSchema }],
    },
  };
}

/** The KubeVirt kinds the kubevirt backend uses. */
export const KUBEVIRT_CRDS: readonly V1CustomResourceDefinition[] = [
  crd('VirtualMachineInstance', 'virtualmachineinstances', ['vmi', 'vmis']),
  crd('VirtualMachine', 'virtualmachines', ['vm', 'vms']),
];

/** installKubevirtCrds creates the CRDs (if absent) and waits until the API server serves them. */
export async function installKubevirtCrds(
  kubeconfig: KubeConfig,
  timeoutMs = 30_000,
): Promise<void> {
  const api = kubeconfig.makeApiClient(ApiextensionsV1Api);
  for (const body of KUBEVIRT_CRDS) {
    await api.createCustomResourceDefinition({ body }).catch((error: { code?: number }) => {
      if (error.code !== 409) throw error;
    });
  }
  const deadline = Date.now() + timeoutMs;
  for (const { metadata } of KUBEVIRT_CRDS) {
    const name = metadata?.name ?? '';
    for (;;) {
      const current = await api.readCustomResourceDefinition({ name });
      const established = current.status?.conditions?.some(
        (condition) => condition.type === 'Established' && condition.status === 'True',
      );
      if (established) break;
      if (Date.now() > deadline)
        throw new Error(`CRD ${name} not Established after ${timeoutMs} ms`);
      await sleep(100);
    }
  }
}
