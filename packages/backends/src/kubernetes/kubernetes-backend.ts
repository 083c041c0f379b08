import type { V1Pod } from '@kubernetes/client-node';
import { BACKGROUND } from '../kube/kube-objects.js';
import {
  createKubeSandboxBackend,
  type KubeBackendOptions,
  type KubeSandboxBackend,
  type SandboxObjectKind,
} from '../kube/kube-sandbox-backend.js';
import {
  egressPointLookup,
  egressTrustSecretData,
  withEgressPoint,
  type EgressPointService,
} from './egress-pod.js';
import { buildSandboxPod, type PodSpecOptions } from './pod-spec.js';
import { isPodLive, podReadiness } from './pod-status.js';

export type KubernetesBackendOptions = KubeBackendOptions &
  Omit<PodSpecOptions, 'namespace'> & {
    /**
     * The chart's egress point: every sandbox Pod gets it as resolver and HTTP(S) proxy (see
     * withEgressPoint). Unset: Pods keep the cluster resolver and the fixed deny list.
     */
    egressPoint?: EgressPointService;
  };

/** podsPath is the Pod collection of a namespace. */
export const podsPath = (namespace: string) =>
  `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`;

/**
 * createKubernetesBackend runs each sandbox as one Pod (see buildSandboxPod) in one namespace;
 * ready when the Pod is Ready and the guest's /healthz answers `ok`.
 */
export function createKubernetesBackend(options: KubernetesBackendOptions): KubeSandboxBackend {
  // The point's cluster IP (and the CA to trust), read once before the first Pod is built.
  const point = options.egressPoint
    ? egressPointLookup(options.client, options.namespace, options.egressPoint)
    : null;
  const kind: SandboxObjectKind<V1Pod> = {
    backend: 'kubernetes',
    noun: 'Pod',
    api: (client, namespace) => ({
      path: podsPath(namespace),
      list: (labelSelector, o) => client.core.listNamespacedPod({ namespace, labelSelector }, o),
      create: (body, o) => client.core.createNamespacedPod({ namespace, body }, o),
      read: (name, o) => client.core.readNamespacedPod({ name, namespace }, o),
      delete: (name, o) =>
        client.core.deleteNamespacedPod({ name, namespace, propagationPolicy: BACKGROUND }, o),
      patch: (name, body, o) => client.core.patchNamespacedPod({ name, namespace, body }, o),
    }),
    build: (template, namespace) => {
      const pod = buildSandboxPod(template, {
        namespace,
        imagePullPolicy: options.imagePullPolicy,
        shmSizeMb: options.shmSizeMb,
        ephemeralStorageMb: options.ephemeralStorageMb,
      });
      return point ? withEgressPoint(pod, point.current()) : pod;
    },
    secretExtras: () => egressTrustSecretData(point?.read() ?? null),
    readiness: podReadiness,
    isLive: isPodLive,
  };
  const backend = createKubeSandboxBackend(kind, options);
  return point ? { ...backend, provision: point.reading(backend.provision) } : backend;
}
