import { loadEnv } from '@cubicle/config';
import type { z } from 'zod';
import { WorkerEnv } from '../env.js';

/**
 * EgressPointEnv is the Kubernetes egress point's configuration: the worker's variables it
 * shares (database, Redis, queue prefix, sandbox namespace, the installation's egress settings,
 * the point's ports), the keyring (it opens the secrets bound to hosts it injects, and the
 * installation CA's key) and the injection switches, and nothing else.
 */
export const EgressPointEnv = WorkerEnv.pick({
  NODE_ENV: true,
  DATABASE_URL: true,
  REDIS_URL: true,
  LOG_LEVEL: true,
  QUEUE_PREFIX: true,
  KUBE_NAMESPACE: true,
  KUBECONFIG: true,
  KUBERNETES_SERVICE_HOST: true,
  CUBICLE_EGRESS_DEFAULT: true,
  CUBICLE_EGRESS_OPERATOR_ALLOW: true,
  CUBICLE_EGRESS_HOST_ADDRESSES: true,
  CUBICLE_EGRESS_UPSTREAM_DNS: true,
  CUBICLE_EGRESS_UPSTREAM_GUARD: true,
  KUBE_EGRESS_POINT_DNS_PORT: true,
  KUBE_EGRESS_POINT_PROXY_PORT: true,
  CUBICLE_EGRESS_POINT_HOST: true,
  CUBICLE_KEYRING: true,
  CUBICLE_EGRESS_INJECT: true,
  CUBICLE_EGRESS_UPSTREAM_CA: true,
});
export type EgressPointEnv = z.infer<typeof EgressPointEnv>;

export function loadEgressPointEnv(
  source: Record<string, string | undefined> = process.env,
): EgressPointEnv {
  return loadEnv('cubicle-egress-point', EgressPointEnv, source);
}
