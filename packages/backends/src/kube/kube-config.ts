import { existsSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';

/** Where the service account token of a Pod is mounted (in-cluster configuration). */
export const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

export interface KubeConfigSource {
  /** A kubeconfig file; wins when given. */
  kubeconfigPath?: string;
  /**
   * KUBERNETES_SERVICE_HOST of the process (set by the kubelet in every Pod). With it and a
   * mounted service account token, the in-cluster configuration is used.
   */
  serviceHost?: string;
  /** Context of the kubeconfig to use; its current context by default. */
  context?: string;
}

/**
 * loadKubeConfig picks the cluster credentials automatically: an explicit kubeconfig file, else
 * the in-cluster service account when running in a Pod, else the client's default lookup
 * (~/.kube/config). The caller's env.ts supplies the inputs; nothing here reads process.env.
 */
export function loadKubeConfig(source: KubeConfigSource): KubeConfig {
  const kc = new KubeConfig();
  if (source.kubeconfigPath) {
    kc.loadFromFile(source.kubeconfigPath);
  } else if (source.serviceHost && existsSync(SERVICE_ACCOUNT_TOKEN)) {
    kc.loadFromCluster();
  } else {
    kc.loadFromDefault();
  }
  if (source.context) kc.setCurrentContext(source.context);
  if (!kc.getCurrentCluster()) throw new Error('the Kubernetes configuration names no cluster');
  return kc;
}
