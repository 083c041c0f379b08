// What the node agent runs for a Pod or a VirtualMachineInstance, read the way kubelet and
// virt-handler would: env from the spec with secretKeyRef resolved from Secrets, the guest and
// VNC ports from the named container ports, the readiness probe's path and port.
import type { CoreV1Api, V1Container, V1Pod } from '@kubernetes/client-node';

export const GUEST_PORT = 8080;
export const VNC_PORT = 5900;

/** A Pod or VMI could not be started yet (like kubelet's CreateContainerConfigError); retried. */
export class WorkloadConfigError extends Error {}

export interface WorkloadSpec {
  guestToken: string;
  guestPort: number;
  vncPort: number;
  /** Readiness probe path on the guest port. */
  probePath: string;
  probePort: number;
  /** Plain env for the desktop's apps (the CUBICLE_GUEST_* variables configure the driver instead). */
  appEnv: Record<string, string>;
  image: string;
  containerName: string;
}

/** A VirtualMachineInstance as far as the agent reads it (the CRD schema is open). */
export interface VmiObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
  };
  spec?: {
    volumes?: Array<{ name: string; cloudInitNoCloud?: { secretRef?: { name?: string } } }>;
  };
  status?: Record<string, unknown> & { nodeName?: string; phase?: string };
}

async function readSecretKey(core: CoreV1Api, namespace: string, name: string, key: string) {
  let data: Record<string, string> | undefined;
  try {
    data = (await core.readNamespacedSecret({ name, namespace })).data;
  } catch (error) {
    if ((error as { code?: number }).code === 404) {
      throw new WorkloadConfigError(`secret "${name}" not found`);
    }
    throw error;
  }
  const value = data?.[key];
  if (value === undefined)
    throw new WorkloadConfigError(`couldn't find key ${key} in Secret ${namespace}/${name}`);
  return Buffer.from(value, 'base64').toString('utf8');
}

function namedPort(container: V1Container, name: string, fallback: number): number {
  return container.ports?.find((port) => port.name === name)?.containerPort ?? fallback;
}

/** podWorkload reads the `desktop` container (or the first one) of a Pod following the contract. */
export async function podWorkload(core: CoreV1Api, pod: V1Pod): Promise<WorkloadSpec> {
  const namespace = pod.metadata?.namespace ?? '';
  const containers = pod.spec?.containers ?? [];
  const container = containers.find((c) => c.name === 'desktop') ?? containers[0];
  if (!container) throw new WorkloadConfigError('pod has no containers');
  const env: Record<string, string> = {};
  for (const entry of container.env ?? []) {
    const ref = entry.valueFrom?.secretKeyRef;
    if (ref) env[entry.name] = await readSecretKey(core, namespace, ref.name ?? '', ref.key);
    else if (entry.value !== undefined) env[entry.name] = entry.value;
  }
  const guestToken = env.CUBICLE_GUEST_TOKEN;
  if (!guestToken) throw new WorkloadConfigError('container env has no CUBICLE_GUEST_TOKEN');
  const guestPort = Number(env.CUBICLE_GUEST_PORT ?? namedPort(container, 'guest', GUEST_PORT));
  const probe = container.readinessProbe?.httpGet;
  const probePort =
    typeof probe?.port === 'number'
      ? probe.port
      : namedPort(container, String(probe?.port ?? 'guest'), guestPort);
  // HOME names the image's writable home; the local sandbox that stands in for the container
  // has its own (/home/sandbox).
  const appEnv = Object.fromEntries(
    Object.entries(env).filter(([name]) => !name.startsWith('CUBICLE_GUEST_') && name !== 'HOME'),
  );
  return {
    guestToken,
    guestPort,
    vncPort: namedPort(container, 'vnc', VNC_PORT),
    probePath: probe?.path ?? '/healthz',
    probePort,
    appEnv,
    image: container.image ?? '',
    containerName: container.name,
  };
}

/**
 * vmiWorkload finds the token the way cloud-init would get it: from the Secret behind the
 * `cloudinitdisk` volume (key `token`, next to `userdata`).
 */
export async function vmiWorkload(core: CoreV1Api, vmi: VmiObject): Promise<WorkloadSpec> {
  const namespace = vmi.metadata.namespace ?? '';
  const volume = vmi.spec?.volumes?.find((v) => v.name === 'cloudinitdisk');
  const secretName = volume?.cloudInitNoCloud?.secretRef?.name;
  if (!secretName)
    throw new WorkloadConfigError('no cloudinitdisk volume with cloudInitNoCloud.secretRef');
  return {
    guestToken: await readSecretKey(core, namespace, secretName, 'token'),
    guestPort: GUEST_PORT,
    vncPort: VNC_PORT,
    probePath: '/healthz',
    probePort: GUEST_PORT,
    appEnv: {},
    image: '',
    containerName: 'compute',
  };
}
