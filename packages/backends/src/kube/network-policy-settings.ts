import { isIP } from 'node:net';
import type { EgressPort, NetworkPolicyOptions } from './network-policy.js';
import { parsePodSelector } from './pod-selector.js';

/** The operator's text settings (worker env, rendered by the Helm chart) for the sandbox policy. */
export interface NetworkPolicySettings {
  /** KUBE_CONTROL_PLANE_SELECTOR: `a=b,c in (api,worker)`. */
  controlPlaneSelector: string;
  /** KUBE_CONTROL_PLANE_NAMESPACE, when the control plane runs in another namespace. */
  controlPlaneNamespace?: string;
  /** KUBE_SANDBOX_EGRESS: `internet` or `none`. */
  egress?: 'internet' | 'none';
  /** KUBE_DENIED_EGRESS_CIDRS: comma-separated CIDRs denied besides the built-in ranges. */
  deniedEgressCidrs?: string;
  /**
   * KUBE_EGRESS_POINT_SELECTOR: the egress point's Pods (`a=b,c=d`); with it sandboxes may reach
   * only them, on `egressPointPorts`.
   */
  egressPointSelector?: string;
  /** KUBE_EGRESS_POINT_NAMESPACE: their namespace when not the sandbox namespace. */
  egressPointNamespace?: string;
  /** The point's DNS and proxy ports as its Pods listen (KUBE_EGRESS_POINT_*_PORT). */
  egressPointPorts?: { dns: number; proxy: number };
}

/**
 * egressPointPorts: DNS on UDP and TCP at the Service's 53 and the Pods' own DNS port (a CNI
 * may judge before or after the Service's translation), the proxy on TCP.
 */
export function egressPointPorts(ports: { dns: number; proxy: number }): EgressPort[] {
  const dns = [...new Set([53, ports.dns])];
  return [
    ...dns.flatMap((port) => [
      { protocol: 'UDP' as const, port },
      { protocol: 'TCP' as const, port },
    ]),
    { protocol: 'TCP', port: ports.proxy },
  ];
}

/** isCidr accepts `address/bits` with bits in range for the address family. */
export function isCidr(text: string): boolean {
  const [address = '', bits, ...rest] = text.split('/');
  const family = isIP(address);
  if (family === 0 || bits === undefined || rest.length > 0 || !/^\d{1,3}$/.test(bits))
    return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

/** parseCidrList reads a comma-separated CIDR list; it throws naming the first bad entry. */
export function parseCidrList(text: string | undefined): string[] {
  const cidrs = (text ?? '')
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean);
  const bad = cidrs.find((c) => !isCidr(c));
  if (bad !== undefined) throw new Error(`not a CIDR: ${JSON.stringify(bad)}`);
  return cidrs;
}

/**
 * networkPolicyOptionsOf turns the operator's settings into the policy's options. The worker and
 * the chart's tests both go through it, so what the chart renders is what the worker applies.
 */
export function networkPolicyOptionsOf(
  settings: NetworkPolicySettings,
): Omit<NetworkPolicyOptions, 'namespace'> {
  return {
    controlPlanePods: parsePodSelector(settings.controlPlaneSelector),
    ...(settings.controlPlaneNamespace && {
      controlPlaneNamespace: settings.controlPlaneNamespace,
    }),
    egress: settings.egress ?? 'internet',
    deniedEgressCidrs: parseCidrList(settings.deniedEgressCidrs),
    ...(settings.egressPointSelector && {
      egressPoint: {
        pods: parsePodSelector(settings.egressPointSelector),
        ...(settings.egressPointNamespace && { namespace: settings.egressPointNamespace }),
        ports: egressPointPorts(settings.egressPointPorts ?? { dns: 5353, proxy: 3128 }),
      },
    }),
  };
}
