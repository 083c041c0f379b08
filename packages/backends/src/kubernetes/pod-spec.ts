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

export interface PodSpecOptions {
  namespace: string;
  imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
  /** Size of the in-memory /dev/shm (browsers need more than the runtime's 64 MB default). */
  shmSizeMb?: number;
}

/**
 * buildSandboxPod is the Pod of one sandbox: one `desktop` container running the pool image,
 * its guest driver on port 8080 (token from the sandbox Secret via secretKeyRef) and VNC on 5900,
 * ready when /healthz answers. Requests equal limits (Guaranteed QoS: desktops are latency
 * sensitive). The Pod never restarts — a crashed desktop is a lost sandbox that reconcile
 * replaces — and gets no service account token: the guest has no business with the API.
 */
export function buildSandboxPod(template: SandboxTemplate, options: PodSpecOptions): V1Pod {
  const name = sandboxObjectName(template.sandboxId);
  const resources = resourcesOf(template);
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
      securityContext: { seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: CONTAINER_NAME,
          image: template.image,
          ...(options.imagePullPolicy && { imagePullPolicy: options.imagePullPolicy }),
          env: [
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
            allowPrivilegeEscalation: false,
            capabilities: { drop: ['ALL'] },
          },
          volumeMounts: [
            { name: 'dshm', mountPath: '/dev/shm' },
            { name: 'tmp', mountPath: '/tmp' },
          ],
        },
      ],
      volumes: [
        {
          name: 'dshm',
          emptyDir: { medium: 'Memory', sizeLimit: `${options.shmSizeMb ?? 512}Mi` },
        },
        { name: 'tmp', emptyDir: {} },
      ],
    },
  };
}
