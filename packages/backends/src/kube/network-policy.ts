import { GUEST_PORT, LABELS, MANAGED_BY, VNC_PORT } from './names.js';
import { selectorMatches, type PodLabelSelector } from './pod-selector.js';

export const NETWORK_POLICY_NAME = 'cubicle-sandboxes';

interface PeerSelector {
  podSelector: PodLabelSelector;
  namespaceSelector?: { matchLabels: Record<string, string> };
}

interface EgressRule {
  to: Array<
    | { ipBlock: { cidr: string; except?: string[] } }
    | {
        namespaceSelector: Record<string, never>;
        podSelector: { matchLabels: Record<string, string> };
      }
    | PeerSelector
  >;
  ports?: EgressPort[];
}

/** A port a NetworkPolicy rule names. */
export interface EgressPort {
  protocol: 'TCP' | 'UDP';
  port: number;
}

/** The egress point's Pods, the only peers sandboxes may reach when it runs (see egressPoint). */
export interface EgressPointPeers {
  pods: PodLabelSelector;
  /** Their namespace when it is not the sandbox namespace. */
  namespace?: string;
  /** The point's ports as its Pods listen (policies see traffic after Service translation). */
  ports: EgressPort[];
}

/**
 * Addresses a sandbox may never reach: private, shared (CGNAT), link-local (cloud metadata
 * endpoints such as 169.254.169.254) and loopback ranges, where a cluster's Pods, Services,
 * nodes, databases and the control plane live. What is left is the public internet.
 */
export const DENIED_EGRESS_V4 = [
  '10.0.0.0/8',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '100.64.0.0/10',
  '169.254.0.0/16',
  '127.0.0.0/8',
  // The 6to4 relay anycast: a relay delivers into whatever IPv4 the packet carries.
  '192.88.99.0/24',
];
/**
 * The IPv6 counterparts, and every IPv6 prefix that carries an IPv4 address a translator or
 * relay on the path would deliver to — NAT64 (well-known and local-use), 6to4, Teredo, SIIT —
 * so a private IPv4 cannot be reached through its IPv6 spelling. (IPv4-mapped `::ffff:0:0/96`
 * never appears on the wire, and the API server refuses it as a CIDR.)
 */
export const DENIED_EGRESS_V6 = [
  'fc00::/7',
  'fe80::/10',
  '::1/128',
  '64:ff9b::/96',
  '64:ff9b:1::/48',
  '2002::/16',
  '2001::/32',
  '::ffff:0:0:0/96',
];

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
    policyTypes: ('Ingress' | 'Egress')[];
    ingress: { from: PeerSelector[]; ports: { protocol: 'TCP'; port: number }[] }[];
    egress: EgressRule[];
  };
}

export interface NetworkPolicyOptions {
  namespace: string;
  /**
   * The control-plane Pods (api and worker only) that may reach guests; never the dashboard, the
   * database or Redis, which have no business with a sandbox.
   */
  controlPlanePods: PodLabelSelector;
  /**
   * The control plane's namespace when it is not the sandbox namespace (matched by the
   * `kubernetes.io/metadata.name` label every namespace carries).
   */
  controlPlaneNamespace?: string;
  /**
   * What sandboxes may reach: `internet` (default: public addresses, and DNS from the cluster's
   * resolver) or `none`. Private ranges — other sandboxes, the control plane, its database and
   * Redis, the API server, node and metadata addresses — are denied either way.
   */
  egress?: 'internet' | 'none';
  /** Further CIDRs to deny, e.g. public addresses of the control plane's own services. */
  deniedEgressCidrs?: string[];
  /**
   * The chart's egress point: with it sandboxes may reach only its Pods, on its ports (DNS and
   * proxy), and every pool's own policy is enforced there; `egress: 'none'` still allows nothing.
   * Without it, `egress` above decides (the fixed deny list).
   */
  egressPoint?: EgressPointPeers;
}

/**
 * buildSandboxNetworkPolicy selects every sandbox Pod of the namespace (KubeVirt's launcher
 * Pods carry their VMI's labels) and admits only control-plane Pods, and only on the guest
 * driver and VNC ports. Since no sandbox matches the control-plane selector, sandbox-to-sandbox
 * traffic is denied at the receiving end. Egress is denied to every private, link-local and
 * loopback address (other sandboxes, the control plane and its data stores, the API server,
 * cloud metadata) and to `deniedEgressCidrs`; only public addresses and DNS stay reachable,
 * or nothing with `egress: 'none'`. With `egressPoint` a sandbox may reach only the point's
 * Pods on the point's ports, where its pool's policy is enforced.
 */
export function buildSandboxNetworkPolicy(options: NetworkPolicyOptions): NetworkPolicy {
  if (matchesSandboxes(options.controlPlanePods))
    throw new Error('the control-plane selector would also select sandboxes');
  const from: PeerSelector = {
    podSelector: structuredClone(options.controlPlanePods),
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
      policyTypes: ['Ingress', 'Egress'],
      ingress: [
        {
          from: [from],
          ports: [
            { protocol: 'TCP', port: GUEST_PORT },
            { protocol: 'TCP', port: VNC_PORT },
          ],
        },
      ],
      egress:
        options.egress === 'none'
          ? []
          : options.egressPoint
            ? pointEgress(options.egressPoint)
            : internetEgress(options.deniedEgressCidrs ?? []),
    },
  };
}

/** pointEgress: the egress point's Pods on its ports, nothing else (not even cluster DNS). */
function pointEgress(point: EgressPointPeers): EgressRule[] {
  if (matchesSandboxes(point.pods))
    throw new Error('the egress point selector would also select sandboxes');
  return [
    {
      to: [
        {
          podSelector: structuredClone(point.pods),
          ...(point.namespace && {
            namespaceSelector: {
              matchLabels: { 'kubernetes.io/metadata.name': point.namespace },
            },
          }),
        },
      ],
      ports: point.ports.map((p) => ({ ...p })),
    },
  ];
}

function internetEgress(extra: string[]): EgressRule[] {
  const v4 = extra.filter((cidr) => !cidr.includes(':'));
  const v6 = extra.filter((cidr) => cidr.includes(':'));
  return [
    {
      to: [
        { ipBlock: { cidr: '0.0.0.0/0', except: [...DENIED_EGRESS_V4, ...v4] } },
        { ipBlock: { cidr: '::/0', except: [...DENIED_EGRESS_V6, ...v6] } },
      ],
    },
    // The cluster resolver lives at a private address: only its DNS port, only kube-dns Pods.
    {
      to: [{ namespaceSelector: {}, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }],
      ports: [
        { protocol: 'UDP', port: 53 },
        { protocol: 'TCP', port: 53 },
      ],
    },
  ];
}

// A selector made only of labels every sandbox carries would let sandboxes reach each other.
function matchesSandboxes(selector: PodLabelSelector): boolean {
  const onlySandboxKeys =
    Object.entries(selector.matchLabels).every(
      ([k, v]) => k.startsWith('cubicle.dev/') || (k === LABELS.managedBy && v === MANAGED_BY),
    ) && (selector.matchExpressions ?? []).every((e) => e.key.startsWith('cubicle.dev/'));
  return onlySandboxKeys || selectorMatches(selector, { [LABELS.managedBy]: MANAGED_BY });
}
