import type { V1Pod } from '@kubernetes/client-node';
import { EGRESS_CA_PATH } from '@cubicle/driver-guest';
import { caBundleWith } from '@cubicle/egress';
import type { KubeClient } from '../kube/client.js';

/**
 * Where a sandbox Pod finds the egress point: the chart's Service, named by the worker
 * (KUBE_EGRESS_POINT_SERVICE), and the proxy port on it (DNS is the Service's port 53); or an
 * address Pods reach it at without a Service (KUBE_EGRESS_POINT_ADDRESS: a point on the node's
 * own network, as in the real-node test), which must also answer DNS on port 53.
 */
export type EgressPointService = (
  | {
      /** The Service's name. */
      service: string;
      /** Its namespace (default: the sandbox namespace). */
      namespace?: string;
      /** The HTTP(S) proxy port on the Service. */
      proxyPort: number;
    }
  | { address: string; proxyPort: number }
) & {
  /**
   * The installation's egress CA (PEM) sandboxes must trust for credentials injected at egress
   * (the point terminates TLS for bound hosts with leaves it signs); read once with the point's
   * address. Unset or null: sandboxes trust only their image's roots (nothing is injected).
   */
  trust?: () => Promise<string | null>;
};

/** The point as a Pod names it: the Service's cluster IP (no DNS needed to find the resolver). */
export interface EgressPointAddress {
  address: string;
  proxyPort: number;
  /** The installation's egress CA and the trust bundle with it, when sandboxes must trust it. */
  trust?: EgressTrust;
}

/** What a sandbox needs to trust the egress CA: the CA alone, and the system bundle plus it. */
export interface EgressTrust {
  caPem: string;
  bundle: string;
}

/** The guest Secret's keys holding the trust files (the token stays an env reference only). */
export const EGRESS_TRUST_KEYS = { ca: 'egress-ca.pem', bundle: 'ca-certificates.crt' } as const;
/** Where OpenSSL, curl and Python read the system bundle in a Debian image. */
export const SYSTEM_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

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
  const trusted = point.trust ? withEgressTrust(spec) : spec;
  return {
    ...pod,
    spec: {
      ...trusted,
      ...egressPointDns(point),
      containers: trusted.containers.map((container) => ({
        ...container,
        env: [
          ...(container.env ?? []).filter((e) => !isProxyName(e.name)),
          ...Object.entries(egressPointEnv(point)).map(([name, value]) => ({ name, value })),
        ],
      })),
    },
  };
}

const TRUST_VOLUME = 'egress-trust';

/**
 * withEgressTrust makes the Pod trust the installation's egress CA, as a local sandbox does: the
 * system bundle plus the CA over SYSTEM_CA_BUNDLE (curl, Python, OpenSSL), the CA alone at
 * EGRESS_CA_PATH with NODE_EXTRA_CA_CERTS (Node), and the desktop adds it to the user's NSS
 * database at start (Chromium). Both files come from the sandbox's guest Secret (only those two
 * keys are mounted; the token stays an env reference). Only the CA's certificate is there: its
 * key and every credential value stay in the control plane and the egress point.
 */
function withEgressTrust(spec: NonNullable<V1Pod['spec']>): NonNullable<V1Pod['spec']> {
  const container = spec.containers[0]!;
  const secretName = (container.env ?? []).find((e) => e.name === 'CUBICLE_GUEST_TOKEN')?.valueFrom
    ?.secretKeyRef?.name;
  if (!secretName) throw new Error('the sandbox Pod names no guest Secret');
  return {
    ...spec,
    volumes: [
      ...(spec.volumes ?? []),
      {
        name: TRUST_VOLUME,
        secret: {
          secretName,
          defaultMode: 0o444,
          items: Object.values(EGRESS_TRUST_KEYS).map((key) => ({ key, path: key })),
        },
      },
    ],
    containers: [
      {
        ...container,
        env: [
          ...(container.env ?? []).filter((e) => e.name !== 'NODE_EXTRA_CA_CERTS'),
          { name: 'NODE_EXTRA_CA_CERTS', value: EGRESS_CA_PATH },
        ],
        volumeMounts: [
          ...(container.volumeMounts ?? []),
          {
            name: TRUST_VOLUME,
            mountPath: SYSTEM_CA_BUNDLE,
            subPath: EGRESS_TRUST_KEYS.bundle,
            readOnly: true,
          },
          {
            name: TRUST_VOLUME,
            mountPath: EGRESS_CA_PATH,
            subPath: EGRESS_TRUST_KEYS.ca,
            readOnly: true,
          },
        ],
      },
      ...spec.containers.slice(1),
    ],
  };
}

/** egressTrustSecretData: the guest Secret's trust files for a point that has them. */
export function egressTrustSecretData(point: EgressPointAddress | null): Record<string, string> {
  if (!point?.trust) return {};
  return {
    [EGRESS_TRUST_KEYS.ca]: point.trust.caPem,
    [EGRESS_TRUST_KEYS.bundle]: point.trust.bundle,
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
  const caPem = (await point.trust?.()) ?? null;
  const trust = caPem ? { trust: { caPem, bundle: await caBundleWith(caPem) } } : {};
  if ('address' in point) return { address: point.address, proxyPort: point.proxyPort, ...trust };
  const ns = point.namespace ?? namespace;
  const service = await client.call(
    `read egress point Service ${ns}/${point.service}`,
    (o) => client.core.readNamespacedService({ name: point.service, namespace: ns }, o),
    signal ? { signal } : {},
  );
  const address = service.spec?.clusterIP;
  if (!address || address === 'None')
    throw new Error(`egress point Service ${ns}/${point.service} has no cluster IP`);
  return { address, proxyPort: point.proxyPort, ...trust };
}

/**
 * EgressPointLookup is a backend's view of the egress point (Pods and VMIs alike): `current`
 * is what sandboxes are built with, read once by the first `provision` (a missing Service fails
 * that provisioning, and the next reads it again, rather than starting a sandbox with no
 * resolver).
 */
export interface EgressPointLookup {
  /** The point as read (throws when asked before the first provision read it). */
  current(): EgressPointAddress;
  /** The point as read, or null before (Secrets of a backend without a point). */
  read(): EgressPointAddress | null;
  /** reading wraps a backend's provision so the point is read before the first sandbox. */
  reading<I extends { signal?: AbortSignal }, R>(
    provision: (input: I) => Promise<R>,
  ): (input: I) => Promise<R>;
}

/** egressPointLookup makes the EgressPointLookup of a backend's configured point. */
export function egressPointLookup(
  client: KubeClient,
  namespace: string,
  point: EgressPointService,
): EgressPointLookup {
  let found: EgressPointAddress | null = null;
  return {
    current() {
      if (!found) throw new Error('the egress point was not read before building a sandbox');
      return found;
    },
    read: () => found,
    reading: (provision) => async (input) => {
      found ??= await readEgressPointAddress(client, namespace, point, input.signal);
      return provision(input);
    },
  };
}
