import type { V1Pod } from '@kubernetes/client-node';
import {
  guestSecretName,
  GUEST_PORT,
  sandboxLabels,
  sandboxObjectName,
  VNC_PORT,
} from '../kube/names.js';
import { poolEnvEntries, resourcesOf, type SandboxTemplate } from '../kube/template.js';

export const CONTAINER_NAME = 'desktop';
/** The desktop image's unprivileged user (images/desktop/Dockerfile). */
export const SANDBOX_UID = 1000;
/** Writable paths of the read-only root: the desktop's runtime files, the user's home, secrets. */
export const WRITABLE_PATHS = {
  tmp: '/tmp',
  varTmp: '/var/tmp',
  home: '/home/cubicle',
  /**
   * In memory; the launcher creates /run/cubicle/secrets in it (0700, its own user's: an
   * emptyDir's own root is root's and world-writable) for per-claim secret files.
   */
  run: '/run/cubicle',
} as const;

export interface PodSpecOptions {
  namespace: string;
  imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
  /** Size of the in-memory /dev/shm (browsers need more than the runtime's 64 MB default). */
  shmSizeMb?: number;
  /**
   * Node disk the Pod may use: its `ephemeral-storage` request and limit (the root is read-only,
   * so this is the disk-backed emptyDirs plus container logs). 4 GiB by default.
   */
  ephemeralStorageMb?: number;
}

export const DEFAULT_EPHEMERAL_STORAGE_MB = 4096;

/**
 * diskSizeLimits splits the Pod's ephemeral storage between its disk-backed emptyDirs — home
 * 1/2, /tmp 1/4, /var/tmp 1/8 — leaving 1/8 for container logs. Each emptyDir past its
 * sizeLimit, or the Pod past its limit, is evicted by the kubelet: one sandbox cannot fill the
 * node's disk. (In-memory emptyDirs count against the memory limit and have their own caps.)
 */
export function diskSizeLimits(ephemeralStorageMb: number) {
  const share = (fraction: number) => `${Math.floor(ephemeralStorageMb * fraction)}Mi`;
  return { home: share(1 / 2), tmp: share(1 / 4), varTmp: share(1 / 8) };
}

/**
 * buildSandboxPod is the Pod of one sandbox: one `desktop` container running the pool image,
 * its guest driver on port 8080 (token from the sandbox Secret via secretKeyRef) and VNC on 5900,
 * ready when /healthz answers. Requests equal limits (Guaranteed QoS: desktops are latency
 * sensitive), ephemeral storage included, and every emptyDir has a sizeLimit. The Pod never restarts — a crashed desktop is a lost sandbox that reconcile
 * replaces — and gets no service account token: the guest has no business with the API. It runs
 * as the image's unprivileged user, with every capability dropped, no privilege escalation,
 * the runtime's default seccomp profile and a read-only root file system; what the desktop
 * writes goes to emptyDirs (/tmp, /var/tmp, home, /dev/shm, and an in-memory /run/cubicle
 * holding the secrets directory for per-claim secret files).
 */
export function buildSandboxPod(template: SandboxTemplate, options: PodSpecOptions): V1Pod {
  const name = sandboxObjectName(template.sandboxId);
  const storageMb = options.ephemeralStorageMb ?? DEFAULT_EPHEMERAL_STORAGE_MB;
  const resources = { ...resourcesOf(template), 'ephemeral-storage': `${storageMb}Mi` };
  const disk = diskSizeLimits(storageMb);
  const placement = template.placement ?? {};
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: options.namespace,
      labels: sandboxLabels({ ...template, state: 'warm' }),
    },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      terminationGracePeriodSeconds: 10,
      ...(placement.runtimeClassName && { runtimeClassName: placement.runtimeClassName }),
      ...(placement.nodeSelector && { nodeSelector: { ...placement.nodeSelector } }),
      ...(placement.tolerations && { tolerations: placement.tolerations.map((t) => ({ ...t })) }),
      securityContext: {
        runAsNonRoot: true,
        runAsUser: SANDBOX_UID,
        runAsGroup: SANDBOX_UID,
        fsGroup: SANDBOX_UID,
        seccompProfile: { type: 'RuntimeDefault' },
      },
      containers: [
        {
          name: CONTAINER_NAME,
          image: template.image,
          ...(options.imagePullPolicy && { imagePullPolicy: options.imagePullPolicy }),
          env: [
            // The writable home (the root is read-only); a pool's env may point it elsewhere.
            { name: 'HOME', value: WRITABLE_PATHS.home },
            ...poolEnvEntries(template.env).map(([envName, value]) => ({ name: envName, value })),
            {
              name: 'CUBICLE_GUEST_TOKEN',
              valueFrom: {
                secretKeyRef: { name: guestSecretName(template.sandboxId), key: 'token' },
              },
            },
            { name: 'CUBICLE_GUEST_PORT', value: String(GUEST_PORT) },
          ],
          ports: [
            { name: 'guest', containerPort: GUEST_PORT, protocol: 'TCP' },
            { name: 'vnc', containerPort: VNC_PORT, protocol: 'TCP' },
          ],
          resources: { requests: { ...resources }, limits: { ...resources } },
          readinessProbe: {
            httpGet: { path: '/healthz', port: 'guest' },
            periodSeconds: 2,
            timeoutSeconds: 2,
            failureThreshold: 3,
          },
          securityContext: {
            runAsNonRoot: true,
            runAsUser: SANDBOX_UID,
            allowPrivilegeEscalation: false,
            privileged: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ['ALL'] },
            seccompProfile: { type: 'RuntimeDefault' },
          },
          volumeMounts: [
            { name: 'dshm', mountPath: '/dev/shm' },
            { name: 'tmp', mountPath: WRITABLE_PATHS.tmp },
            { name: 'var-tmp', mountPath: WRITABLE_PATHS.varTmp },
            { name: 'home', mountPath: WRITABLE_PATHS.home },
            { name: 'run', mountPath: WRITABLE_PATHS.run },
          ],
        },
      ],
      volumes: [
        {
          name: 'dshm',
          emptyDir: { medium: 'Memory', sizeLimit: `${options.shmSizeMb ?? 512}Mi` },
        },
        { name: 'tmp', emptyDir: { sizeLimit: disk.tmp } },
        { name: 'var-tmp', emptyDir: { sizeLimit: disk.varTmp } },
        { name: 'home', emptyDir: { sizeLimit: disk.home } },
        { name: 'run', emptyDir: { medium: 'Memory', sizeLimit: '16Mi' } },
      ],
    },
  };
}
