import type { V1Pod } from '@kubernetes/client-node';
import { BACKGROUND } from '../kube/kube-objects.js';
import {
  createKubeSandboxBackend,
  type KubeBackendOptions,
  type KubeSandboxBackend,
  type SandboxObjectKind,
} from '../kube/kube-sandbox-backend.js';
import { buildSandboxPod, type PodSpecOptions } from './pod-spec.js';
import { isPodLive, podReadiness } from './pod-status.js';

export type KubernetesBackendOptions = KubeBackendOptions & Omit<PodSpecOptions, 'namespace'>;

/** podsPath is the Pod collection of a namespace. */
export const podsPath = (namespace: string) =>
  `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`;

/**
 * createKubernetesBackend runs each sandbox as one Pod (see buildSandboxPod) in one namespace;
 * ready when the Pod is Ready and the guest's /healthz answers `ok`.
 */
export function createKubernetesBackend(options: KubernetesBackendOptions): KubeSandboxBackend {
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
    build: (template, namespace) =>
      buildSandboxPod(template, {
        namespace,
        imagePullPolicy: options.imagePullPolicy,
        shmSizeMb: options.shmSizeMb,
        ephemeralStorageMb: options.ephemeralStorageMb,
      }),
    secretExtras: () => ({}),
    readiness: podReadiness,
    isLive: isPodLive,
  };
  return createKubeSandboxBackend(kind, options);
}
