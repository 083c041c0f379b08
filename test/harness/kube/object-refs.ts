// How the node agent sees a Pod or VMI (kind, identity, deletion, node), and the two writes that
// make it the node's: binding and, for Pods, the final delete once its desktop is stopped.
import type { CoreV1Api, CustomObjectsApi, V1Pod } from '@kubernetes/client-node';
import type { VmiObject } from './workload-spec.js';
import { updateVmiStatus, VMI_API } from './write-status.js';

export const NODE_NAME = 'cubicle-test-node';

export type WorkloadKind = 'Pod' | 'VirtualMachineInstance';

export interface ObjectRef {
  kind: WorkloadKind;
  name: string;
  uid: string;
  isDeleting: boolean;
  /** Pods: spec.nodeName; VMIs: status.nodeName. */
  nodeName: string | undefined;
  object: V1Pod | VmiObject;
}

export const podRef = (pod: V1Pod): ObjectRef => ({
  kind: 'Pod',
  name: pod.metadata?.name ?? '',
  uid: pod.metadata?.uid ?? '',
  isDeleting: Boolean(pod.metadata?.deletionTimestamp),
  nodeName: pod.spec?.nodeName,
  object: pod,
});

export const vmiRef = (vmi: VmiObject): ObjectRef => ({
  kind: 'VirtualMachineInstance',
  name: vmi.metadata.name,
  uid: vmi.metadata.uid ?? '',
  isDeleting: Boolean(vmi.metadata.deletionTimestamp),
  nodeName: vmi.status?.nodeName,
  object: vmi,
});

/** finishPodDeletion is kubelet's final delete once the containers are gone, for this very pod only. */
export async function finishPodDeletion(
  core: CoreV1Api,
  namespace: string,
  ref: ObjectRef,
): Promise<void> {
  await core
    .deleteNamespacedPod({
      name: ref.name,
      namespace,
      // With a body the API server reads the options from it alone, not from the query.
      body: { gracePeriodSeconds: 0, preconditions: { uid: ref.uid } },
    })
    .catch((error: unknown) => {
      const code = (error as { code?: number }).code;
      if (code !== 404 && code !== 409) throw error;
    });
}

/** bind puts the object on our node: Pods through pods/binding (as the scheduler), VMIs by status.nodeName. */
export async function bind(
  core: CoreV1Api,
  custom: CustomObjectsApi,
  namespace: string,
  ref: ObjectRef,
): Promise<void> {
  if (ref.kind === 'Pod') {
    await core.createNamespacedPodBinding({
      name: ref.name,
      namespace,
      body: {
        metadata: { name: ref.name, uid: ref.uid },
        target: { apiVersion: 'v1', kind: 'Node', name: NODE_NAME },
      },
    });
  } else {
    await updateVmiStatus(custom, namespace, ref.name, ref.uid, (status) => {
      status.nodeName = NODE_NAME;
      status.phase = 'Scheduled';
    });
  }
}

/** readRef re-reads an object (null once it is gone), so a retry never acts on a stale copy. */
export async function readRef(
  core: CoreV1Api,
  custom: CustomObjectsApi,
  namespace: string,
  ref: ObjectRef,
): Promise<ObjectRef | null> {
  try {
    return ref.kind === 'Pod'
      ? podRef(await core.readNamespacedPod({ name: ref.name, namespace }))
      : vmiRef(
          (await custom.getNamespacedCustomObject({
            ...VMI_API,
            namespace,
            name: ref.name,
          })) as VmiObject,
        );
  } catch (error) {
    if ((error as { code?: number }).code === 404) return null;
    throw error;
  }
}
