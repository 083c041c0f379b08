// The real Kubernetes test cluster the kubernetes and kubevirt backends are tested against: etcd
// and kube-apiserver built from their Go modules, plus the node agent that runs Pods and VMIs as
// local desktops on their own loopback IPs (test/harness/kube).
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ApiextensionsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  VersionApi,
  type V1Pod,
} from '@kubernetes/client-node';
import { vncPreambleOf } from '@cubicle/viewer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listDesktopIds } from '@cubicle/driver-guest';
import { isRunning } from '../../packages/embedded/src/index.js';
import { KUBE_TOOL_VERSIONS } from '../../scripts/lib/kube-paths.mjs';
import {
  NODE_NAME,
  startKubeCluster,
  startNodeAgent,
  type KubeCluster,
  type NodeAgent,
  type VmiObject,
} from '../harness/kube/index.js';

const VMI = { group: 'kubevirt.io', version: 'v1', plural: 'virtualmachineinstances' } as const;

/**
 * until polls `read` until `accept` holds for its value; a read that throws counts as not yet
 * (waiting, not timing: the test timeout bounds it).
 */
async function until<T>(read: () => Promise<T>, accept: (value: T) => boolean): Promise<T> {
  for (;;) {
    const result = await read().then(
      (value) => ({ ok: true as const, value }),
      () => ({ ok: false as const }),
    );
    if (result.ok && accept(result.value)) return result.value;
    await sleep(200);
  }
}

/**
 * rfbGreeting reads the first bytes a VNC server sends ("RFB 003.008\n") after the viewer
 * credential (vncPreambleOf the guest token); '' when it sends nothing for a second.
 */
function rfbGreeting(host: string, port: number, preamble?: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    if (preamble) socket.write(preamble);
    socket.setTimeout(1000, () => {
      socket.destroy();
      resolve('');
    });
    socket.once('data', (chunk) => {
      socket.destroy();
      resolve(chunk.toString('latin1'));
    });
    socket.once('error', reject);
  });
}

const labels = (sandbox: string) => ({
  'cubicle.dev/tenant': 'tnt-test',
  'cubicle.dev/pool': 'pool-test',
  'cubicle.dev/sandbox': sandbox,
  'cubicle.dev/state': 'warm',
  'app.kubernetes.io/managed-by': 'cubicle',
});

/** A Pod and its Secret as the kubernetes backend creates them (kube-contract). */
function contractPod(name: string): V1Pod {
  return {
    metadata: { name, labels: labels(name) },
    spec: {
      containers: [
        {
          name: 'desktop',
          image: 'cubicle/desktop:test',
          env: [
            {
              name: 'CUBICLE_GUEST_TOKEN',
              valueFrom: { secretKeyRef: { name: `${name}-guest`, key: 'token' } },
            },
            { name: 'CUBICLE_GUEST_PORT', value: '8080' },
            { name: 'POOL_GREETING', value: 'hello' },
          ],
          ports: [
            { name: 'guest', containerPort: 8080 },
            { name: 'vnc', containerPort: 5900 },
          ],
          readinessProbe: { httpGet: { path: '/healthz', port: 'guest' } },
        },
      ],
    },
  };
}

const isPodReady = (pod: V1Pod) =>
  pod.status?.phase === 'Running' &&
  Boolean(pod.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));

describe('real Kubernetes test cluster', () => {
  let cluster: KubeCluster;
  let agent: NodeAgent;
  let namespace: string;
  let core: CoreV1Api;

  beforeAll(async () => {
    cluster = await startKubeCluster();
    namespace = await cluster.createNamespace();
    core = cluster.kubeconfig.makeApiClient(CoreV1Api);
    agent = await startNodeAgent({ kubeconfig: cluster.kubeconfig, namespace });
    await agent.synced;
  }, 120_000);

  afterAll(async () => {
    await agent?.stop();
    await cluster?.stop();
  }, 60_000);

  async function createSecret(name: string, data: Record<string, string>) {
    await core.createNamespacedSecret({
      namespace,
      body: { metadata: { name, labels: labels(name) }, type: 'Opaque', stringData: data },
    });
  }

  it('serves the pinned, version-stamped kube-apiserver', async () => {
    const version = await cluster.kubeconfig.makeApiClient(VersionApi).getCode();
    expect(version.gitVersion).toBe(KUBE_TOOL_VERSIONS.kubeApiserver);
    expect(version.major).toBe('1');
    expect(version.minor).toBe(KUBE_TOOL_VERSIONS.kubeApiserver.split('.')[1]);
    expect(cluster.version).toBe(KUBE_TOOL_VERSIONS.kubeApiserver);
  });

  it('has the KubeVirt CRDs established and served', async () => {
    const crds = cluster.kubeconfig.makeApiClient(ApiextensionsV1Api);
    for (const name of ['virtualmachineinstances.kubevirt.io', 'virtualmachines.kubevirt.io']) {
      const crd = await crds.readCustomResourceDefinition({ name });
      expect(crd.spec.scope).toBe('Namespaced');
      expect(crd.status?.conditions).toContainEqual(
        expect.objectContaining({ type: 'Established', status: 'True' }),
      );
    }
    const vmi = await crds.readCustomResourceDefinition({
      name: 'virtualmachineinstances.kubevirt.io',
    });
    expect(vmi.spec.names.shortNames).toContain('vmi');
    // An open schema: the API server keeps every field of a VMI instead of pruning it.
    expect(
      vmi.spec.versions[0]?.schema?.openAPIV3Schema?.x_kubernetes_preserve_unknown_fields,
    ).toBe(true);
    // Like KubeVirt's: no status subresource, so status goes through a normal update.
    expect(vmi.spec.versions[0]?.subresources?.status).toBeUndefined();
    const custom = cluster.kubeconfig.makeApiClient(CustomObjectsApi);
    const list = (await custom.listNamespacedCustomObject({ ...VMI, namespace })) as {
      items: unknown[];
    };
    expect(list.items).toEqual([]);
  });

  it('runs a contract Pod as a desktop on its own IP and stops it when the Pod is deleted', async () => {
    const name = `sbx-pod${randomBytes(3).toString('hex')}`;
    const token = randomBytes(32).toString('hex');
    await createSecret(`${name}-guest`, { token });
    await core.createNamespacedPod({ namespace, body: contractPod(name) });

    const pod = await until(() => core.readNamespacedPod({ name, namespace }), isPodReady);
    expect(pod.spec?.nodeName).toBe(NODE_NAME);
    const ip = pod.status?.podIP ?? '';
    expect(ip).toMatch(/^127\.(1\d\d|2[0-5]\d)\.\d+\.\d+$/);
    expect(pod.status?.containerStatuses?.[0]).toMatchObject({ name: 'desktop', ready: true });

    // The readiness probe's endpoint, on the pod's own address, and the driver takes the
    // Secret's token (and only it).
    const health = await fetch(`http://${ip}:8080/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ protocol_version: 'v1', vnc_port: 5900 });
    const authorized = await fetch(`http://${ip}:8080/v1/windows`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(authorized.status).toBe(200);
    const wrong = await fetch(`http://${ip}:8080/v1/windows`, {
      headers: { authorization: `Bearer ${randomBytes(32).toString('hex')}` },
    });
    expect(wrong.status).toBe(401);
    expect(await rfbGreeting(ip, 5900, vncPreambleOf(token))).toMatch(/^RFB 003\.00\d/);
    expect(await rfbGreeting(ip, 5900)).toBe('');
    // Pool env reaches the desktop's apps; the driver's own settings do not.
    const workload = agent.workload('Pod', name);
    expect(workload?.session.env.POOL_GREETING).toBe('hello');
    expect(workload?.session.env.CUBICLE_GUEST_TOKEN).toBeUndefined();

    const processes = (await workload?.session.listProcesses()) ?? [];
    expect(processes.length).toBeGreaterThan(3);
    const desktopId = workload?.session.id ?? '';
    expect(await listDesktopIds()).toContain(desktopId);

    // Deleted with the default grace period: the agent stops the desktop, then finishes the delete.
    await core.deleteNamespacedPod({ name, namespace });
    await until(
      () =>
        core.readNamespacedPod({ name, namespace }).then(
          () => 'present',
          (e: { code?: number }) => (e.code === 404 ? 'gone' : 'error'),
        ),
      (state) => state === 'gone',
    );
    expect(agent.workload('Pod', name)).toBeUndefined();
    expect(processes.filter((pid) => isRunning(pid))).toEqual([]);
    expect(await listDesktopIds()).not.toContain(desktopId);
  });

  it('holds a Pod whose Secret is missing in Pending (as kubelet does) until the Secret exists', async () => {
    const name = `sbx-late${randomBytes(3).toString('hex')}`;
    await core.createNamespacedPod({ namespace, body: contractPod(name) });
    const waiting = await until(
      () => core.readNamespacedPod({ name, namespace }),
      (pod) => pod.status?.containerStatuses?.[0]?.state?.waiting !== undefined,
    );
    expect(waiting.status?.phase).toBe('Pending');
    expect(waiting.status?.containerStatuses?.[0]?.state?.waiting?.reason).toBe(
      'CreateContainerConfigError',
    );
    expect(agent.workload('Pod', name)).toBeUndefined();

    await createSecret(`${name}-guest`, { token: randomBytes(32).toString('hex') });
    await until(() => core.readNamespacedPod({ name, namespace }), isPodReady);
    await core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 });
    await until(
      async () => agent.workload('Pod', name),
      (w) => w === undefined,
    );
  });

  it('runs a VirtualMachineInstance and reports its interface IP', async () => {
    const name = `sbx-vmi${randomBytes(3).toString('hex')}`;
    const token = randomBytes(32).toString('hex');
    await createSecret(`${name}-guest`, { token, userdata: '#cloud-config\n' });
    const custom = cluster.kubeconfig.makeApiClient(CustomObjectsApi);
    await custom.createNamespacedCustomObject({
      ...VMI,
      namespace,
      body: {
        apiVersion: 'kubevirt.io/v1',
        kind: 'VirtualMachineInstance',
        metadata: { name, labels: labels(name) },
        spec: {
          domain: {
            devices: {
              autoattachGraphicsDevice: true,
              interfaces: [{ name: 'default', masquerade: {} }],
            },
          },
          networks: [{ name: 'default', pod: {} }],
          volumes: [
            { name: 'cloudinitdisk', cloudInitNoCloud: { secretRef: { name: `${name}-guest` } } },
          ],
        },
      },
    });
    const vmi = await until(
      async () =>
        (await custom.getNamespacedCustomObject({ ...VMI, namespace, name })) as VmiObject,
      (v) => v.status?.phase === 'Running',
    );
    expect(vmi.status?.nodeName).toBe(NODE_NAME);
    const interfaces = vmi.status?.interfaces as Array<{ name: string; ipAddress: string }>;
    expect(interfaces[0]?.name).toBe('default');
    const ip = interfaces[0]?.ipAddress ?? '';
    expect(ip).toMatch(/^127\.(1\d\d|2[0-5]\d)\.\d+\.\d+$/);
    const health = await until(
      () => fetch(`http://${ip}:8080/healthz`),
      (r) => r.status === 200,
    );
    expect(await health.json()).toMatchObject({ protocol_version: 'v1' });
    const authorized = await fetch(`http://${ip}:8080/v1/windows`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(authorized.status).toBe(200);

    const processes =
      (await agent.workload('VirtualMachineInstance', name)?.session.listProcesses()) ?? [];
    expect(processes.length).toBeGreaterThan(3);
    await custom.deleteNamespacedCustomObject({ ...VMI, namespace, name });
    await until(
      async () => agent.workload('VirtualMachineInstance', name),
      (w) => w === undefined,
    );
    await until(
      async () => processes.filter((pid) => isRunning(pid)),
      (alive) => alive.length === 0,
    );
  });

  it('keeps its data across an API server restart, and the agent follows the new server', async () => {
    const name = `cm-${randomBytes(3).toString('hex')}`;
    await core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name }, data: { kept: 'yes' } },
    });
    await cluster.restartApiServer();
    const kept = await core.readNamespacedConfigMap({ name, namespace });
    expect(kept.data).toEqual({ kept: 'yes' });

    // The agent's watches ended with the old process; it lists and watches again.
    const pod = `sbx-after${randomBytes(3).toString('hex')}`;
    await createSecret(`${pod}-guest`, { token: randomBytes(32).toString('hex') });
    await core.createNamespacedPod({ namespace, body: contractPod(pod) });
    const running = await until(() => core.readNamespacedPod({ name: pod, namespace }), isPodReady);
    expect(running.status?.podIP).toMatch(/^127\./);
    await core.deleteNamespacedPod({ name: pod, namespace, gracePeriodSeconds: 0 });
    await until(
      async () => agent.workload('Pod', pod),
      (w) => w === undefined,
    );
  });
});
