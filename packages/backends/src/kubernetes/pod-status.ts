import type { V1Pod } from '@kubernetes/client-node';

/** What provisioning makes of a Pod's status. */
export type PodReadiness =
  | { kind: 'ready'; ip: string }
  | { kind: 'waiting'; why: string }
  | { kind: 'failed'; why: string };

/**
 * podReadiness: Ready means the kubelet's readiness probe (guest /healthz) passed and the Pod
 * has an IP; the backend still checks /healthz itself before reporting the sandbox warm. A
 * terminating or finished Pod will never become ready.
 */
export function podReadiness(pod: V1Pod | undefined): PodReadiness {
  if (!pod) return { kind: 'failed', why: 'the Pod is gone' };
  if (pod.metadata?.deletionTimestamp) return { kind: 'failed', why: 'the Pod is being deleted' };
  const phase = pod.status?.phase;
  if (phase === 'Failed' || phase === 'Succeeded') {
    const reason = pod.status?.reason ?? pod.status?.message ?? '';
    return { kind: 'failed', why: `the Pod ended (${phase}${reason ? `: ${reason}` : ''})` };
  }
  const waiting = pod.status?.containerStatuses?.find((c) => c.state?.waiting)?.state?.waiting;
  if (waiting && FATAL_WAITING.has(waiting.reason ?? ''))
    return { kind: 'failed', why: `container ${waiting.reason}: ${waiting.message ?? ''}`.trim() };
  const ready = pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
  const ip = pod.status?.podIP;
  if (phase !== 'Running') return { kind: 'waiting', why: `phase ${phase ?? 'Pending'}` };
  if (!ready || !ip) return { kind: 'waiting', why: 'not Ready yet' };
  return { kind: 'ready', ip };
}

// Waiting reasons that no amount of waiting fixes. Pull errors and a not-yet-visible Secret are
// retried by the kubelet, so they are left to the provisioning timeout.
const FATAL_WAITING = new Set(['InvalidImageName', 'ErrImageNeverPull']);

/** isPodLive: counts as a running sandbox for list() (not terminating, not finished). */
export function isPodLive(pod: V1Pod): boolean {
  const phase = pod.status?.phase;
  return !pod.metadata?.deletionTimestamp && phase !== 'Failed' && phase !== 'Succeeded';
}
