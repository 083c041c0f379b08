// Status the node agent reports, in the shapes kubelet (Pods, through pods/status) and
// virt-handler (VMIs, a normal update: KubeVirt has no status subresource) write.
import type {
  CoreV1Api,
  CustomObjectsApi,
  V1ContainerStatus,
  V1Pod,
  V1PodCondition,
} from '@kubernetes/client-node';
import type { VmiObject, WorkloadSpec } from './workload-spec.js';

const isConflict = (error: unknown) => (error as { code?: number }).code === 409;
export const isNotFound = (error: unknown) => (error as { code?: number }).code === 404;

/** withConflictRetry re-reads and re-applies a change when someone else updated the object first. */
async function withConflictRetry(update: () => Promise<void>): Promise<void> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await update();
    } catch (error) {
      if (!isConflict(error) || attempt >= 10) throw error;
    }
  }
}

export type PodReport =
  | {
      phase: 'Running';
      ip: string;
      isReady: boolean;
      spec: WorkloadSpec;
      desktopId: string;
      startedAt: Date;
    }
  | { phase: 'Pending'; reason: string; message: string };

export function condition(
  type: string,
  isTrue: boolean,
  previous: V1PodCondition[] | undefined,
): V1PodCondition {
  const status = isTrue ? 'True' : 'False';
  const old = previous?.find((c) => c.type === type);
  // lastTransitionTime moves only when the status changes, as kubelet does.
  const lastTransitionTime =
    old?.status === status && old.lastTransitionTime ? old.lastTransitionTime : new Date();
  return { type, status, lastTransitionTime };
}

/** writePodStatus replaces the pod's status with `report` (uid-checked, so a new pod of the same name is left alone). */
export async function writePodStatus(
  core: CoreV1Api,
  namespace: string,
  name: string,
  uid: string,
  report: PodReport,
): Promise<void> {
  await withConflictRetry(async () => {
    const pod: V1Pod = await core.readNamespacedPod({ name, namespace });
    if (pod.metadata?.uid !== uid || pod.metadata.deletionTimestamp) return;
    const previous = pod.status?.conditions;
    const containerName = pod.spec?.containers[0]?.name ?? 'desktop';
    if (report.phase === 'Pending') {
      const waiting: V1ContainerStatus = {
        name: containerName,
        image: pod.spec?.containers[0]?.image ?? '',
        imageID: '',
        ready: false,
        restartCount: 0,
        state: { waiting: { reason: report.reason, message: report.message } },
      };
      pod.status = {
        ...pod.status,
        phase: 'Pending',
        hostIP: '127.0.0.1',
        conditions: [
          condition('PodScheduled', true, previous),
          condition('Ready', false, previous),
        ],
        containerStatuses: [waiting],
      };
    } else {
      const running: V1ContainerStatus = {
        name: report.spec.containerName,
        image: report.spec.image,
        imageID: '',
        containerID: `cubicle://${report.desktopId}`,
        ready: report.isReady,
        started: true,
        restartCount: 0,
        state: { running: { startedAt: report.startedAt } },
      };
      pod.status = {
        phase: 'Running',
        hostIP: '127.0.0.1',
        hostIPs: [{ ip: '127.0.0.1' }],
        podIP: report.ip,
        podIPs: [{ ip: report.ip }],
        startTime: pod.status?.startTime ?? report.startedAt,
        conditions: [
          condition('PodScheduled', true, previous),
          condition('Initialized', true, previous),
          condition('ContainersReady', report.isReady, previous),
          condition('Ready', report.isReady, previous),
        ],
        containerStatuses: [running],
      };
    }
    await core.replaceNamespacedPodStatus({ name, namespace, body: pod });
  });
}

export const VMI_API = {
  group: 'kubevirt.io',
  version: 'v1',
  plural: 'virtualmachineinstances',
} as const;

/**
 * updateVmiStatus applies `change` to a fresh copy of the VMI's status and writes the whole
 * object back; returns false when the VMI is gone, replaced or being deleted.
 */
export async function updateVmiStatus(
  custom: CustomObjectsApi,
  namespace: string,
  name: string,
  uid: string,
  change: (status: NonNullable<VmiObject['status']>) => void,
): Promise<boolean> {
  let isCurrent = true;
  await withConflictRetry(async () => {
    const vmi = (await custom.getNamespacedCustomObject({
      ...VMI_API,
      namespace,
      name,
    })) as VmiObject;
    if (vmi.metadata.uid !== uid || vmi.metadata.deletionTimestamp) {
      isCurrent = false;
      return;
    }
    vmi.status = { ...vmi.status };
    change(vmi.status);
    await custom.replaceNamespacedCustomObject({ ...VMI_API, namespace, name, body: vmi });
  });
  return isCurrent;
}
