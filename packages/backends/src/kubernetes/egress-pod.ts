import type { V1Pod } from '@kubernetes/client-node';
import type { KubeClient } from '../kube/client.js';

/**
 * Where a sandbox Pod finds the egress point: the chart's Service, named by the worker
 * (KUBE_EGRESS_POINT_SERVICE), and the proxy port on it (DNS is the Service's port 53); or an
 * address Pods reach it at without a Service (KUBE_EGRESS_POINT_ADDRESS: a point on the node's
 * own network, as in the real-node test), which must also answer DNS on port 53.
 */
export type EgressPointService =
  | {
      /** The Service's name. */
      service: string;
      /** Its namespace (default: the sandbox namespace). */
      namespace?: string;
      /** The HTTP(S) proxy port on the Service. */
      proxyPort: number;
    }
  | { address: string; proxyPort: number };

/** The point as a Pod names it: the Service's cluster IP (no DNS needed to find the resolver). */
export interface EgressPointAddress {
  address: string;
  proxyPort: number;
}

/** The variables every HTTP client reads for its proxy (both spellings: curl reads lower case). */
export const PROXY_ENV_NAMES = [
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'http_proxy',
  'https_proxy',
  'NO_PROXY',
  'no_proxy',
] as const;

/**
 * withEgressPoint points a sandbox Pod at the egress point: its only resolver is the point
 * (dnsPolicy None, no search domains: a sandbox has no business with cluster names) and its
 * HTTP(S) proxy is the point (pool env of the same names is replaced). What ignores the proxy
 * reaches nothing: the sandbox NetworkPolicy admits only the point.
 */
export function withEgressPoint(pod: V1Pod, point: EgressPointAddress): V1Pod {
  const spec = pod.spec!;
  return {
    ...pod,
    spec: {
      ...spec,
      ...egressPointDns(point),
      containers: spec.containers.map((container) => ({
        ...container,
        env: [
          ...(container.env ?? []).filter((e) => !isProxyName(e.name)),
          ...Object.entries(egressPointEnv(point)).map(([name, value]) => ({ name, value })),
        ],
      })),
    },
  };
}

const isProxyName = (name: string) => (PROXY_ENV_NAMES as readonly string[]).includes(name);

/** egressPointEnv: the proxy variables that send HTTP(S) clients to the point. */
export function egressPointEnv(point: EgressPointAddress): Record<string, string> {
  const proxy = `http://${point.address}:${point.proxyPort}`;
  const noProxy = 'localhost,127.0.0.1,::1';
  return {
    HTTP_PROXY: proxy,
    HTTPS_PROXY: proxy,
    http_proxy: proxy,
    https_proxy: proxy,
    NO_PROXY: noProxy,
    no_proxy: noProxy,
  };
}

/** withProxyEnv: a pool's env with its own proxy variables replaced by the point's. */
export function withProxyEnv(
  env: Record<string, string>,
  point: EgressPointAddress,
): Record<string, string> {
  const kept = Object.entries(env).filter(([name]) => !isProxyName(name));
  return { ...Object.fromEntries(kept), ...egressPointEnv(point) };
}

/**
 * egressPointDns: the point as the only resolver (Pod and VMI spec fields alike; a VMI's guest
 * gets it from its launcher Pod through DHCP).
 */
export function egressPointDns(point: EgressPointAddress) {
  return {
    dnsPolicy: 'None',
    dnsConfig: {
      nameservers: [point.address],
      searches: [] as string[],
      options: [{ name: 'ndots', value: '1' }],
    },
  };
}

/**
 * readEgressPointAddress reads the point Service's cluster IP (or takes the address given). A
 * headless or missing Service is an error: sandboxes would have no resolver.
 */
export async function readEgressPointAddress(
  client: KubeClient,
  namespace: string,
  point: EgressPointService,
  signal?: AbortSignal,
): Promise<EgressPointAddress> {
  if ('address' in point) return { address: point.address, proxyPort: point.proxyPort };
  const ns = point.namespace ?? namespace;
  const service = await client.call(
    `read egress point Service ${ns}/${point.service}`,
    (o) => client.core.readNamespacedService({ name: point.service, namespace: ns }, o),
    signal ? { signal } : {},
  );
  const address = service.spec?.clusterIP;
  if (!address || address === 'None')
    throw new Error(`egress point Service ${ns}/${point.service} has no cluster IP`);
  return { address, proxyPort: point.proxyPort };
}
