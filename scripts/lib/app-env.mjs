// What each process of `npm start` gets from the environment: an explicit allow-list per process
// (what its env.ts reads, plus what Node and the system need), never the supervisor's whole
// environment. The dashboard reads only the API's address, its Redis and its session secret:
// no DATABASE_URL, no keyring, no viewer signing key (as the Helm chart's web Deployment).
// test/integration/start-supervision.test.ts keeps these lists in step with the env.ts schemas.

/** What every Node process needs from the system around it. */
const SYSTEM = ['PATH', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR'];

/** APP_ENV lists, per process, the variables it may receive. */
export const APP_ENV = {
  // apps/worker/src/env.ts, plus HOME (~/.kube/config when KUBECONFIG is unset).
  worker: [
    ...SYSTEM,
    'HOME',
    'NODE_ENV',
    'DATABASE_URL',
    'REDIS_URL',
    'LOG_LEVEL',
    'QUEUE_PREFIX',
    'WORKER_CONCURRENCY',
    'PROVISION_CONCURRENCY',
    'CUBICLE_KEYRING',
    'CUBICLE_BACKENDS',
    'CUBICLE_SANDBOX_SOCKET_GID',
    'HOLLOW_GUESTS',
    'GUEST_CONCURRENCY',
    'KUBE_NAMESPACE',
    'KUBECONFIG',
    'KUBERNETES_SERVICE_HOST',
    'KUBE_NETWORK_POLICY',
    'KUBE_CONTROL_PLANE_SELECTOR',
    'KUBE_SANDBOX_EGRESS',
    'KUBE_DENIED_EGRESS_CIDRS',
    'KUBE_EGRESS_POINT_SERVICE',
    'KUBE_EGRESS_POINT_ADDRESS',
    'KUBE_EGRESS_POINT_NAMESPACE',
    'KUBE_EGRESS_POINT_SELECTOR',
    'KUBE_EGRESS_POINT_DNS_PORT',
    'KUBE_EGRESS_POINT_PROXY_PORT',
    'KUBE_SANDBOX_EPHEMERAL_STORAGE_MB',
    'KUBE_CONTROL_PLANE_NAMESPACE',
    'KUBE_RUNTIME_CLASS',
    'KUBE_NODE_SELECTOR',
    'KUBE_TOLERATIONS',
    'KUBE_IMAGE_PULL_POLICY',
    'CUBICLE_WEBHOOKS_ALLOW_PRIVATE',
    'CUBICLE_EGRESS_DEFAULT',
    'CUBICLE_EGRESS_OPERATOR_ALLOW',
    'CUBICLE_EGRESS_HOST_ADDRESSES',
    'CUBICLE_EGRESS_POINT_HOST',
    'CUBICLE_OBJECT_STORE',
    'CUBICLE_OBJECT_STORE_DIR',
    'CUBICLE_S3_ENDPOINT',
    'CUBICLE_S3_REGION',
    'CUBICLE_S3_BUCKET',
    'CUBICLE_S3_ACCESS_KEY_ID',
    'CUBICLE_S3_SECRET_ACCESS_KEY',
    'CUBICLE_S3_FORCE_PATH_STYLE',
    'CUBICLE_EGRESS_LOCAL',
    'CUBICLE_EGRESS_LINK_RANGE',
    'CUBICLE_EGRESS_UPSTREAM_DNS',
    'CUBICLE_EGRESS_UPSTREAM_GUARD',
    'CUBICLE_EGRESS_UPSTREAM_CA',
    'CUBICLE_EGRESS_INJECT',
    'CUBICLE_EGRESS_RELAY',
    'WEBHOOK_RETRY_BASE_MS',
    'WEBHOOK_RETRY_WINDOW_MS',
    'WEBHOOK_TIMEOUT_MS',
    'WEBHOOK_RELAY_INTERVAL_MS',
    'RECLAIM_INTERVAL_MS',
    'SWEEP_INTERVAL_MS',
    'USAGE_ROLLUP_INTERVAL_MS',
    'WORKER_METRICS_PORT',
    'WORKER_HEALTH_PORT',
    'WORKER_HEALTH_HOST',
  ],
  // apps/api/src/env.ts, plus CUBICLE_VIEWER_KEY_PEM (the chart's form of CUBICLE_VIEWER_KEYS).
  api: [
    ...SYSTEM,
    'NODE_ENV',
    'API_HOST',
    'API_PORT',
    'DATABASE_URL',
    'REDIS_URL',
    'LOG_LEVEL',
    'QUEUE_PREFIX',
    'CUBICLE_VIEWER_KEYS',
    'CUBICLE_VIEWER_KEY_PEM',
    'API_METRICS_PORT',
    'API_METRICS_HOST',
    'API_METRICS_TOKEN',
    'CUBICLE_WEB_URL',
    'CUBICLE_PUBLIC_API_URL',
    'VIEWER_MAX_STREAMS_PER_TICKET',
    'VIEWER_MAX_STREAMS_PER_TENANT',
    'CUBICLE_KEYRING',
    'CUBICLE_WEBHOOKS_ALLOW_PRIVATE',
    'CUBICLE_EGRESS_DEFAULT',
    'CUBICLE_EGRESS_OPERATOR_ALLOW',
    'CUBICLE_EGRESS_HOST_ADDRESSES',
    'CUBICLE_OBJECT_STORE',
    'CUBICLE_OBJECT_STORE_DIR',
    'CUBICLE_S3_ENDPOINT',
    'CUBICLE_S3_REGION',
    'CUBICLE_S3_BUCKET',
    'CUBICLE_S3_ACCESS_KEY_ID',
    'CUBICLE_S3_SECRET_ACCESS_KEY',
    'CUBICLE_S3_FORCE_PATH_STYLE',
  ],
  // apps/web/lib/env.ts, plus Next's telemetry switch.
  web: [
    ...SYSTEM,
    'NODE_ENV',
    'NEXT_TELEMETRY_DISABLED',
    'CUBICLE_API_URL',
    'CUBICLE_WEB_URL',
    'REDIS_URL',
    'CUBICLE_WEB_REDIS_PREFIX',
    'CUBICLE_WEB_SESSION_SECRET',
    'CUBICLE_WEB_SESSION_TTL_SECONDS',
  ],
};

/**
 * appEnv picks `name`'s variables out of `env` (unset and empty ones left out). `home` replaces
 * HOME for a process that runs as another user, so it never writes into root's home.
 */
export function appEnv(name, env, { home } = {}) {
  const allowed = APP_ENV[name];
  if (!allowed) throw new Error(`no environment allow-list for ${name}`);
  const picked = {};
  for (const key of allowed) if (env[key] !== undefined && env[key] !== '') picked[key] = env[key];
  if (home !== undefined) picked.HOME = home;
  return picked;
}
