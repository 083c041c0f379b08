// The kubernetes backend on the real node (issue 36) as the e2e stack's custom backend: the
// worker provisions Pods of `image` in `namespace` on the cluster that
// test/harness/kube/real-node started, and the suite sees them through the API server.
import { CoreV1Api } from '@kubernetes/client-node';
import { sandboxIdOfObjectName, sandboxObjectName } from '@cubicle/backends';
import type { RealNodeCluster } from '../../../harness/kube/real-node/index.js';
import type { E2eBackend } from '../../support/sandbox-backend.js';

/**
 * realNodeBackend is startStack's `customBackend` for Pods of `image` in `namespace`, with
 * `workerEnv` added to the worker's (e.g. the egress point's address). Images are imported into
 * the node's containerd, never pulled.
 */
export function realNodeBackend(
  rn: RealNodeCluster,
  namespace: string,
  { image, workerEnv = {} }: { image: string; workerEnv?: Record<string, string> },
): () => Promise<E2eBackend> {
  const core = () => rn.cluster.kubeconfig.makeApiClient(CoreV1Api);
  const pods = async () =>
    (await core().listNamespacedPod({ namespace })).items.filter(
      (p) => !p.metadata?.deletionTimestamp,
    );
  return async () => ({
    kind: 'kubernetes',
    workerEnv: {
      CUBICLE_BACKENDS: 'kubernetes',
      KUBECONFIG: rn.cluster.kubeconfigPath,
      KUBE_NAMESPACE: namespace,
      KUBE_IMAGE_PULL_POLICY: 'Never',
      ...workerEnv,
    },
    pool: { image, backend: 'kubernetes' },
    liveSandboxIds: async () =>
      new Set(
        (await pods())
          .map((p) => sandboxIdOfObjectName(p.metadata!.name!))
          .filter((id): id is string => id !== null),
      ),
    loseSandbox: async (id) => {
      await core().deleteNamespacedPod({ name: sandboxObjectName(id), namespace });
    },
    plantOrphan: () => Promise.reject(new Error('not used here')),
    holds: async (id) => (await pods()).some((p) => p.metadata!.name === sandboxObjectName(id)),
    close: async () => undefined,
  });
}
