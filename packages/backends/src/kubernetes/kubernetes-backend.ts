import type { V1Pod } from '@kubernetes/client-node';
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
    collectionPath: podsPath,
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
