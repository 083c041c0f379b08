import { envVars, loadEnv } from '@cubicle/config';
import { parseCidrList } from '@cubicle/backends';
import { checkObjectStoreEnv, egressEnvFields, objectStoreEnvFields } from '@cubicle/control-plane';
import { z } from 'zod';

const KubeTolerations = z.array(
  z.strictObject({
    key: z.string().optional(),
    operator: z.enum(['Exists', 'Equal']).optional(),
    value: z.string().optional(),
    effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']).optional(),
    tolerationSeconds: z.number().int().optional(),
  }),
);

/** WorkerEnv is everything the worker process reads from its environment, parsed once at start. */
export const WorkerEnv = z.object({
  NODE_ENV: envVars.nodeEnv(),
  DATABASE_URL: envVars.databaseUrl(),
  REDIS_URL: envVars.redisUrl(),
  LOG_LEVEL: envVars.logLevel(),
  /** BullMQ key prefix; one Redis can serve several Cubicle installations. */
  QUEUE_PREFIX: z
    .string()
    .regex(/^[a-z0-9:_-]{1,80}$/)
    .default('cubicle'),
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(8),
  /**
   * Sandbox provisions/destroys run at once per worker. Starting desktops is CPU-heavy; on a small
   * machine many at once starve everything else (the reclaim sweep included).
   */
  PROVISION_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(4),
  /** `id:base64key[,id:base64key…]`; the first key seals, all keys open (rotation). */
  CUBICLE_KEYRING: z.string().min(1, 'must hold at least one key (id:base64key)'),
  /** Which backends this worker drives (comma-separated). */
  CUBICLE_BACKENDS: z
    .string()
    .default('local')
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.enum(['local', 'kubernetes', 'kubevirt'])).min(1)),
  /**
   * Numeric gid of the API process when it runs unprivileged (`npm start` as root runs it as the
   * `cubicle` user): the local backend makes sandbox sockets connectable by that group. Unset:
   * the worker's own user only.
   */
  CUBICLE_SANDBOX_SOCKET_GID: z.coerce.number().int().min(1).max(4_294_967_294).optional(),
  /**
   * LOAD TESTS ONLY: `http://127.0.0.1:<port>#<admin token>` of a hollow guest server
   * (startHollowGuests). When set, the `local` backend slot provisions hollow sandboxes there
   * instead of desktops. Set by `npm run bench:scale` and the scale tests, never by `npm start`.
   */
  HOLLOW_GUESTS: z
    .string()
    .regex(/^http:\/\/127\.0\.0\.1:\d+#[0-9a-f]+$/, 'http://127.0.0.1:<port>#<admin token>')
    .optional(),
  /** Guest calls (and secrets syncs) one worker process runs at once, each on another sandbox. */
  GUEST_CONCURRENCY: z.coerce.number().int().min(1).max(1024).default(64),
  /**
   * Namespace of the sandbox Pods/VMIs (kubernetes and kubevirt backends). One per installation:
   * the orphan sweep deletes every Cubicle-labelled object there that its database does not know.
   */
  KUBE_NAMESPACE: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'a Kubernetes namespace name')
    .default('cubicle-sandboxes'),
  /** A kubeconfig file; without it the in-cluster service account is used inside a Pod, else ~/.kube/config. */
  KUBECONFIG: z.string().min(1).optional(),
  /** Set by the kubelet in every Pod; tells the worker it runs in a cluster. */
  KUBERNETES_SERVICE_HOST: z.string().min(1).optional(),
  /**
   * The worker applies a NetworkPolicy to KUBE_NAMESPACE that admits only the api and worker
   * Pods (KUBE_CONTROL_PLANE_SELECTOR: equality terms and `key in (a,b)`, e.g. the Helm chart's
   * `app.kubernetes.io/name=cubicle,app.kubernetes.io/instance=R,app.kubernetes.io/component in
   * (api,worker)`) to the guest and VNC ports and so denies sandbox-to-sandbox traffic. Off only
   * where another policy does the same.
   */
  KUBE_NETWORK_POLICY: envVars.boolean(true),
  KUBE_CONTROL_PLANE_SELECTOR: z
    .string()
    .min(1)
    .default('app.kubernetes.io/name=cubicle,app.kubernetes.io/component in (api,worker)'),
  /**
   * What sandboxes may reach: `internet` (public addresses and the cluster's DNS) or `none`.
   * Private, link-local, loopback and IPv4-in-IPv6 ranges are denied either way, and so is
   * every CIDR of KUBE_DENIED_EGRESS_CIDRS (comma-separated).
   */
  KUBE_SANDBOX_EGRESS: z.enum(['internet', 'none']).default('internet'),
  KUBE_DENIED_EGRESS_CIDRS: z
    .string()
    .optional()
    .superRefine((v, ctx) => {
      try {
        parseCidrList(v);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
      }
    }),
  /**
   * Disk a sandbox Pod may use (ephemeral-storage request and limit; its emptyDirs get
   * sizeLimits out of it). A Pod past it is evicted by the kubelet.
   */
  KUBE_SANDBOX_EPHEMERAL_STORAGE_MB: z.coerce.number().int().min(256).max(1_048_576).default(4096),
  /** The control plane's namespace when it differs from KUBE_NAMESPACE. */
  KUBE_CONTROL_PLANE_NAMESPACE: z.string().min(1).optional(),
  /** Defaults for every sandbox Pod: RuntimeClass (e.g. gvisor), node selector (`a=b,c=d`), tolerations (JSON array). */
  KUBE_RUNTIME_CLASS: z.string().min(1).optional(),
  KUBE_NODE_SELECTOR: z.string().min(1).optional(),
  KUBE_TOLERATIONS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (!v) return undefined;
      try {
        return KubeTolerations.parse(JSON.parse(v));
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be a JSON array of tolerations' });
        return z.NEVER;
      }
    }),
  KUBE_IMAGE_PULL_POLICY: z.enum(['Always', 'IfNotPresent', 'Never']).optional(),
  /**
   * Operator setting: webhooks may be delivered to private, loopback and link-local addresses
   * (on-premise receivers, tests). Off: such deliveries fail without being sent.
   */
  CUBICLE_WEBHOOKS_ALLOW_PRIVATE: envVars.boolean(false),
  /** Operator egress settings (default `none`; ranges opened in the floor): egressEnvFields. */
  ...egressEnvFields,
  /** The object store (CUBICLE_OBJECT_STORE fs|s3, CUBICLE_S3_*): the API's, the same one. */
  ...objectStoreEnvFields,
  /**
   * The local backend's egress point (root only; @cubicle/egress): `off` keeps every local sandbox
   * on loopback only whatever its policy. The range its sandbox links take /30s from; the
   * resolvers it asks (comma-separated IPs; default: this host's); and, for tests and benches,
   * the only ranges it may dial at all (unset: anywhere the policy allows).
   */
  CUBICLE_EGRESS_LOCAL: z.enum(['auto', 'off']).default('auto'),
  CUBICLE_EGRESS_LINK_RANGE: z
    .string()
    .regex(/^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/, 'an IPv4 CIDR such as 10.217.0.0/16')
    .default('10.217.0.0/16'),
  CUBICLE_EGRESS_UPSTREAM_DNS: z
    .string()
    .optional()
    .transform((v) =>
      v
        ? v
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
        : [],
    ),
  CUBICLE_EGRESS_UPSTREAM_GUARD: z
    .string()
    .optional()
    .transform((v) =>
      v
        ? v
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
        : undefined,
    ),
  /**
   * Credentials injected at egress (`inject` on stored secrets): `auto` makes the installation's
   * egress CA on first start (key sealed with the keyring) and terminates TLS for bound hosts
   * only; `off` never terminates TLS (bound secrets are then not injected). UPSTREAM_CA: a PEM
   * file the point trusts upstream besides the system's roots (tests: the fake internet's CA).
   */
  CUBICLE_EGRESS_INJECT: z.enum(['auto', 'off']).default('auto'),
  CUBICLE_EGRESS_UPSTREAM_CA: z.string().optional(),
  /**
   * The egress relay (scripts/tools/egress-relay, built by the bootstrap): the local point hands
   * connections that carry more than a page's worth to it, and the kernel moves their bytes
   * (splice). Unset: ~/.cache/cubicle-tools/egress-relay when it exists; `off`: Node copies all.
   */
  CUBICLE_EGRESS_RELAY: z.string().optional(),
  /**
   * The Kubernetes egress point (the chart's egress Deployment, `egress-point-main.js`): with
   * KUBE_EGRESS_POINT_SERVICE set, every sandbox Pod gets that Service's cluster IP as its only
   * resolver and as HTTP(S)_PROXY, and the sandbox NetworkPolicy admits only the Pods of
   * KUBE_EGRESS_POINT_SELECTOR (in KUBE_EGRESS_POINT_NAMESPACE, default the sandbox namespace)
   * on the point's ports: the pool's egress policy is enforced there. Unset: today's fixed deny
   * list (KUBE_SANDBOX_EGRESS). The ports are the point's own (its Service maps 53 to the DNS
   * port); CUBICLE_EGRESS_POINT_HOST is where the point process listens.
   */
  KUBE_EGRESS_POINT_SERVICE: z.string().min(1).optional(),
  /** Instead of a Service: an IP sandbox Pods reach the point at directly (DNS on its port 53). */
  KUBE_EGRESS_POINT_ADDRESS: z.ipv4().optional(),
  KUBE_EGRESS_POINT_NAMESPACE: z.string().min(1).optional(),
  KUBE_EGRESS_POINT_SELECTOR: z.string().min(1).optional(),
  KUBE_EGRESS_POINT_DNS_PORT: z.coerce.number().int().min(1).max(65535).default(5353),
  KUBE_EGRESS_POINT_PROXY_PORT: z.coerce.number().int().min(1).max(65535).default(3128),
  CUBICLE_EGRESS_POINT_HOST: envVars.host('0.0.0.0'),
  /** First retry gap of a failed webhook delivery; gaps double up to 2 h. */
  WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().min(10).max(3_600_000).default(10_000),
  /** How long after the event a delivery is retried before it fails for good. */
  WEBHOOK_RETRY_WINDOW_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .max(7 * 86_400_000)
    .default(86_400_000),
  /** Bound of one delivery attempt (resolution, connection, answer). */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  /** How often the outbox is scanned for due deliveries (those written inside a transaction, lost jobs). */
  WEBHOOK_RELAY_INTERVAL_MS: z.coerce.number().int().min(100).max(60_000).default(1000),
  RECLAIM_INTERVAL_MS: z.coerce.number().int().min(100).max(60_000).default(500),
  SWEEP_INTERVAL_MS: z.coerce.number().int().min(1000).max(600_000).default(5000),
  /** How often usage is rolled up into hourly rows (GET /v1/usage reads those). */
  USAGE_ROLLUP_INTERVAL_MS: z.coerce.number().int().min(1000).max(3_600_000).default(60_000),
  /** Prometheus metrics on loopback; 0 picks a free port, unset disables. */
  WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** Liveness (`/healthz`) and readiness (`/readyz`) probes over HTTP (health.ts); unset disables. */
  WORKER_HEALTH_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  WORKER_HEALTH_HOST: envVars.host('127.0.0.1'),
});
export type WorkerEnv = z.infer<typeof WorkerEnv>;

export function loadWorkerEnv(source: Record<string, string | undefined> = process.env): WorkerEnv {
  // An `s3` store names its bucket and credentials (checkObjectStoreEnv).
  return loadEnv('cubicle-worker', WorkerEnv.superRefine(checkObjectStoreEnv), source);
}
