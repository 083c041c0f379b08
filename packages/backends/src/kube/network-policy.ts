import { GUEST_PORT, LABELS, MANAGED_BY, VNC_PORT } from './names.js';

export const NETWORK_POLICY_NAME = 'cubicle-sandboxes';

interface PeerSelector {
  podSelector: { matchLabels: Record<string, string> };
  namespaceSelector?: { matchLabels: Record<string, string> };
}

/**
 * The wire shape of a NetworkPolicy. @kubernetes/client-node's V1NetworkPolicy renames `from`
 * to `_from` for its serializer; these objects go to the API server as plain JSON.
 */
export interface NetworkPolicy {
  apiVersion: 'networking.k8s.io/v1';
  kind: 'NetworkPolicy';
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  spec: {
    podSelector: { matchLabels: Record<string, string> };
    policyTypes: 'Ingress'[];
    ingress: { from: PeerSelector[]; ports: { protocol: 'TCP'; port: number }[] }[];
  };
}

export interface NetworkPolicyOptions {
  namespace: string;
  /** Labels of the control-plane Pods (api, worker) that may reach guests. */
  controlPlanePodLabels: Record<string, string>;
  /**
   * The control plane's namespace when it is not the sandbox namespace (matched by the
   * `kubernetes.io/metadata.name` label every namespace carries).
   */
  controlPlaneNamespace?: string;
}

/**
 * buildSandboxNetworkPolicy selects every sandbox Pod of the namespace (KubeVirt's launcher
 * Pods carry their VMI's labels) and admits only control-plane Pods, and only on the guest
 * driver and VNC ports. Since no sandbox matches the control-plane selector, sandbox-to-sandbox
 * traffic is denied at the receiving end. Egress is left to the cluster's own policies.
 */
export function buildSandboxNetworkPolicy(options: NetworkPolicyOptions): NetworkPolicy {
  if (matchesSandboxes(options.controlPlanePodLabels))
    throw new Error('the control-plane selector would also select sandboxes');
  const from: PeerSelector = {
    podSelector: { matchLabels: options.controlPlanePodLabels },
    ...(options.controlPlaneNamespace && {
      namespaceSelector: {
        matchLabels: { 'kubernetes.io/metadata.name': options.controlPlaneNamespace },
      },
    }),
  };
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: {
      name: NETWORK_POLICY_NAME,
      namespace: options.namespace,
      labels: { [LABELS.managedBy]: MANAGED_BY },
    },
    spec: {
      podSelector: { matchLabels: { [LABELS.managedBy]: MANAGED_BY } },
      policyTypes: ['Ingress'],
      ingress: [
        {
          from: [from],
          ports: [
            { protocol: 'TCP', port: GUEST_PORT },
            { protocol: 'TCP', port: VNC_PORT },
          ],
        },
      ],
    },
  };
}

// A selector made only of labels every sandbox carries would let sandboxes reach each other.
function matchesSandboxes(labels: Record<string, string>): boolean {
  return Object.entries(labels).every(
    ([k, v]) => k.startsWith('cubicle.dev/') || (k === LABELS.managedBy && v === MANAGED_BY),
  );
}
