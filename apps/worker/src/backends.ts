import {
  createKubeClient,
  createKubernetesBackend,
  createKubevirtBackend,
  createHollowBackend,
  createLocalBackend,
  LocalEgress,
  loadKubeConfig,
  localBackendScope,
  networkPolicyOptionsOf,
  parseLabelSelector,
  type KubeBackendOptions,
  type KubeClient,
} from '@cubicle/backends';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Backends } from '@cubicle/control-plane';
import type { Logger } from 'pino';
import type { WorkerEnv } from './env.js';

/**
 * localEgressOf is the local backend's egress (started by main.ts once the database is up), or
 * null where it cannot work: not root (namespaces, nftables), hollow guests, or turned off.
 */
export function localEgressOf(env: WorkerEnv, log: Logger): LocalEgress | null {
  if (!env.CUBICLE_BACKENDS.includes('local') || env.HOLLOW_GUESTS) return null;
  if (env.CUBICLE_EGRESS_LOCAL === 'off') return null;
  if (process.getuid?.() !== 0) {
    log.warn('local egress needs root: every local sandbox keeps loopback only (egress none)');
    return null;
  }
  return new LocalEgress({
    scope: localBackendScope(env.DATABASE_URL),
    point: {
      linkRange: env.CUBICLE_EGRESS_LINK_RANGE,
      upstreamDns: env.CUBICLE_EGRESS_UPSTREAM_DNS,
      ...(env.CUBICLE_EGRESS_UPSTREAM_GUARD && {
        upstreamGuard: env.CUBICLE_EGRESS_UPSTREAM_GUARD,
      }),
      ...(env.CUBICLE_EGRESS_RELAY !== 'off' && {
        relay:
          env.CUBICLE_EGRESS_RELAY ?? join(homedir(), '.cache', 'cubicle-tools', 'egress-relay'),
      }),
    },
    onError: (err, what) =>
      log.warn({ err: err instanceof Error ? err.message : String(err) }, `egress: ${what}`),
  });
}

/**
 * createBackends builds the backends this worker drives (CUBICLE_BACKENDS). A backend that is
 * configured but not available here stops the worker at start rather than failing every job.
 */
export async function createBackends(
  env: WorkerEnv,
  log: Logger,
  egress: LocalEgress | null = null,
  /** The installation's egress CA (PEM) sandbox Pods trust; null: injection is off or failed. */
  egressCa?: () => Promise<string | null>,
): Promise<Backends> {
  const backends: Backends = {};
  let kube: KubeBackendOptions | null = null;
  const kubeOptions = () => (kube ??= kubeBackendOptions(env, log));
  for (const kind of env.CUBICLE_BACKENDS) {
    switch (kind) {
      case 'local':
        backends.local = env.HOLLOW_GUESTS
          ? hollowBackend(env.HOLLOW_GUESTS, log)
          : createLocalBackend({
              scope: localBackendScope(env.DATABASE_URL),
              ...(env.CUBICLE_SANDBOX_SOCKET_GID !== undefined && {
                socketGid: env.CUBICLE_SANDBOX_SOCKET_GID,
              }),
              ...(egress && { egress }),
            });
        break;
      case 'kubernetes':
        backends.kubernetes = createKubernetesBackend({
          ...kubeOptions(),
          imagePullPolicy: env.KUBE_IMAGE_PULL_POLICY,
          ephemeralStorageMb: env.KUBE_SANDBOX_EPHEMERAL_STORAGE_MB,
          ...egressPointOf(env, egressCa),
        });
        break;
      case 'kubevirt':
        backends.kubevirt = createKubevirtBackend({
          ...kubeOptions(),
          ...egressPointOf(env, egressCa),
        });
        break;
      default:
        kind satisfies never;
    }
  }
  log.info({ backends: Object.keys(backends) }, 'backends ready');
  return backends;
}

/** hollowBackend: load-test sandboxes without desktops (HOLLOW_GUESTS, benchmarks and scale tests only). */
function hollowBackend(spec: string, log: Logger) {
  const [url, adminToken] = spec.split('#') as [string, string];
  log.warn({ url }, 'HOLLOW_GUESTS: the local backend provisions hollow load-test sandboxes');
  return createHollowBackend({ url, adminToken });
}

/**
 * egressPointOf: where sandbox Pods and VMIs find the chart's egress point (none: unset), and
 * the CA they trust for credentials it injects.
 */
function egressPointOf(env: WorkerEnv, trust?: () => Promise<string | null>) {
  const trusting = trust ? { trust } : {};
  if (env.KUBE_EGRESS_POINT_ADDRESS)
    return {
      egressPoint: {
        address: env.KUBE_EGRESS_POINT_ADDRESS,
        proxyPort: env.KUBE_EGRESS_POINT_PROXY_PORT,
        ...trusting,
      },
    };
  if (!env.KUBE_EGRESS_POINT_SERVICE) return {};
  return {
    egressPoint: {
      service: env.KUBE_EGRESS_POINT_SERVICE,
      ...(env.KUBE_EGRESS_POINT_NAMESPACE && { namespace: env.KUBE_EGRESS_POINT_NAMESPACE }),
      proxyPort: env.KUBE_EGRESS_POINT_PROXY_PORT,
      ...trusting,
    },
  };
}

/**
 * egressPointSettings: the NetworkPolicy's egress point peers. A Service without a selector
 * stops the worker: sandboxes would be pointed at a point the policy does not let them reach.
 */
function egressPointSettings(env: WorkerEnv) {
  if (!env.KUBE_EGRESS_POINT_SERVICE && !env.KUBE_EGRESS_POINT_ADDRESS) return {};
  if (!env.KUBE_EGRESS_POINT_SELECTOR)
    throw new Error(
      'KUBE_EGRESS_POINT_SERVICE/ADDRESS needs KUBE_EGRESS_POINT_SELECTOR (its Pods)',
    );
  return {
    egressPointSelector: env.KUBE_EGRESS_POINT_SELECTOR,
    ...(env.KUBE_EGRESS_POINT_NAMESPACE && {
      egressPointNamespace: env.KUBE_EGRESS_POINT_NAMESPACE,
    }),
    egressPointPorts: {
      dns: env.KUBE_EGRESS_POINT_DNS_PORT,
      proxy: env.KUBE_EGRESS_POINT_PROXY_PORT,
    },
  };
}

/** One client (one keep-alive connection pool) serves both Kubernetes backends. */
function kubeBackendOptions(env: WorkerEnv, log: Logger): KubeBackendOptions {
  const client: KubeClient = createKubeClient(
    loadKubeConfig({ kubeconfigPath: env.KUBECONFIG, serviceHost: env.KUBERNETES_SERVICE_HOST }),
  );
  return {
    client,
    namespace: env.KUBE_NAMESPACE,
    placement: {
      ...(env.KUBE_RUNTIME_CLASS && { runtimeClassName: env.KUBE_RUNTIME_CLASS }),
      ...(env.KUBE_NODE_SELECTOR && { nodeSelector: parseLabelSelector(env.KUBE_NODE_SELECTOR) }),
      ...(env.KUBE_TOLERATIONS && { tolerations: env.KUBE_TOLERATIONS }),
    },
    ...(env.KUBE_NETWORK_POLICY && {
      networkPolicy: networkPolicyOptionsOf({
        controlPlaneSelector: env.KUBE_CONTROL_PLANE_SELECTOR,
        controlPlaneNamespace: env.KUBE_CONTROL_PLANE_NAMESPACE,
        egress: env.KUBE_SANDBOX_EGRESS,
        deniedEgressCidrs: env.KUBE_DENIED_EGRESS_CIDRS,
        ...egressPointSettings(env),
      }),
    }),
    onWarning: (msg, err) =>
      log.warn({ err: err instanceof Error ? err.message : String(err) }, msg),
  };
}
