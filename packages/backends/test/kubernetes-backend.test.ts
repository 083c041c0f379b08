// The kubernetes backend against a real kube-apiserver, with the test node agent running every
// Pod as a real desktop (≤ 3 at a time).
import { connect } from 'node:net';
import type { V1Pod } from '@kubernetes/client-node';
import { vncPreambleOf } from '@cubicle/viewer';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createKubernetesBackend,
  guestSecretName,
  sandboxObjectName,
  type KubeSandboxBackend,
} from '../src/index.js';
import { buildGuestSecret, newGuestToken } from '../src/kube/guest-secret.js';
import { buildSandboxPod } from '../src/kubernetes/pod-spec.js';
import {
  newSandboxId,
  provisionInput,
  startKubeFixture,
  type KubeFixture,
} from './kube-fixture.js';
import { apiRequestCount } from '../../../test/harness/kube/index.js';

let kube: KubeFixture;
let backend: KubeSandboxBackend;
const CONTROL_PLANE = {
  'app.kubernetes.io/name': 'cubicle',
  'app.kubernetes.io/component': 'worker',
};

beforeAll(async () => {
  kube = await startKubeFixture();
  backend = createKubernetesBackend({
    client: kube.client,
    namespace: kube.namespace,
    networkPolicy: { controlPlanePods: { matchLabels: CONTROL_PLANE } },
  });
}, 180_000);

afterAll(async () => {
  await backend?.close();
  await kube?.stop();
}, 120_000);

const readPod = (name: string) => kube.core.readNamespacedPod({ name, namespace: kube.namespace });
const status = (err: unknown) => (err as { code?: number }).code;
const provision = (id: string) =>
  backend.provision(provisionInput(id, AbortSignal.timeout(120_000)));

describe('kubernetes backend', () => {
  const a = newSandboxId();
  const b = newSandboxId();

  let vnc: { endpoint: string; token: string } | null = null;

  it('provisions a Pod that turns Ready and whose guest answers with the Secret token', async () => {
    const up = await provision(a);
    vnc = { endpoint: up.vncEndpoint!, token: up.guestToken };
    expect(up.ref).toBe(sandboxObjectName(a));
    expect(up.guestUrl).toMatch(/^http:\/\/127\.\d+\.\d+\.\d+:8080$/);
    const ip = new URL(up.guestUrl).hostname;
    expect(up.vncEndpoint).toBe(`${ip}:5900`);

    const health = await fetch(`${up.guestUrl}/healthz`);
    expect(health.status).toBe(200);
    expect(((await health.json()) as { status: string }).status).toBe('ok');
    // The token authenticates; nothing else does.
    const authed = await fetch(`${up.guestUrl}/v1/windows`, {
      headers: { authorization: `Bearer ${up.guestToken}` },
    });
    expect(authed.status).toBe(200);
    const wrong = await fetch(`${up.guestUrl}/v1/windows`, {
      headers: { authorization: `Bearer ${'0'.repeat(64)}` },
    });
    expect(wrong.status).toBe(401);

    const pod = await readPod(up.ref);
    expect(pod.status?.podIP).toBe(ip);
    expect(pod.metadata?.labels?.['cubicle.dev/sandbox']).toBe(a);
    expect(pod.metadata?.labels?.['cubicle.dev/state']).toBe('warm');
    // The token lives in the Secret only.
    const secret = await kube.core.readNamespacedSecret({
      name: guestSecretName(a),
      namespace: kube.namespace,
    });
    expect(Buffer.from(secret.data?.token ?? '', 'base64').toString()).toBe(up.guestToken);
    expect(JSON.stringify(pod)).not.toContain(up.guestToken);
    expect(await backend.list()).toContain(a);
  });

  it('applied the NetworkPolicy: only control-plane Pods reach guest and VNC ports', async () => {
    const { NetworkingV1Api } = await import('@kubernetes/client-node');
    const net = kube.cluster.kubeconfig.makeApiClient(NetworkingV1Api);
    const policy = await net.readNamespacedNetworkPolicy({
      name: 'cubicle-sandboxes',
      namespace: kube.namespace,
    });
    expect(policy.spec?.podSelector?.matchLabels).toEqual({
      'app.kubernetes.io/managed-by': 'cubicle',
    });
    expect(policy.spec?.ingress?.[0]?._from?.[0]?.podSelector?.matchLabels).toEqual(CONTROL_PLANE);
    expect(policy.spec?.ingress?.[0]?.ports?.map((p) => p.port)).toEqual([8080, 5900]);
  });

  it("the Pod's VNC port gives nothing without the viewer credential: no banner, no desktop", async () => {
    const [host, port] = vnc!.endpoint.split(':') as [string, string];
    const first = (preamble?: Buffer) =>
      new Promise<string>((resolve) => {
        const socket = connect({ host, port: Number(port) });
        if (preamble) socket.write(preamble);
        let got = '';
        socket.on('data', (d: Buffer) => (got += d.toString('latin1')));
        socket.setTimeout(1500, () => socket.destroy());
        socket.on('close', () => resolve(got));
        socket.on('error', () => undefined);
        // A VNC client that speaks first (or a probe) sends its version: still nothing back.
        if (!preamble) socket.write('RFB 003.008\n');
      });
    expect(await first()).toBe('');
    expect(await first(vncPreambleOf('f'.repeat(64)))).toBe('');
    expect(await first(vncPreambleOf(vnc!.token))).toBe('RFB 003.008\n');
  });

  it('markClaimed flips the state label with optimistic concurrency, idempotently', async () => {
    const before = await readPod(sandboxObjectName(a));
    // Once the informer holds this version, the label costs one PATCH and no GET of the Pod.
    const informer = await backend.informer();
    await vi.waitFor(() =>
      expect(informer.get(sandboxObjectName(a))?.metadata?.resourceVersion).toBe(
        before.metadata?.resourceVersion,
      ),
    );
    const calls = async () => ({
      gets: await apiRequestCount(kube.cluster, { verb: 'GET', resource: 'pods' }),
      patches: await apiRequestCount(kube.cluster, { verb: 'PATCH', resource: 'pods' }),
    });
    const start = await calls();
    await backend.markClaimed(a);
    const end = await calls();
    expect({ gets: end.gets - start.gets, patches: end.patches - start.patches }).toEqual({
      gets: 0,
      patches: 1,
    });
    const after = await readPod(sandboxObjectName(a));
    expect(after.metadata?.labels?.['cubicle.dev/state']).toBe('claimed');
    expect(after.metadata?.resourceVersion).not.toBe(before.metadata?.resourceVersion);
    await backend.markClaimed(a);
    expect((await readPod(sandboxObjectName(a))).metadata?.resourceVersion).toBe(
      after.metadata?.resourceVersion,
    );
    // A gone sandbox is not an error: the database decides, reconcile cleans up.
    await backend.markClaimed(newSandboxId());
  });

  it('a Pod deleted behind its back disappears from list()', async () => {
    await provision(b);
    expect(await backend.list()).toEqual(expect.arrayContaining([a, b]));
    await kube.core.deleteNamespacedPod({ name: sandboxObjectName(b), namespace: kube.namespace });
    await vi.waitFor(async () => expect(await backend.list()).not.toContain(b), {
      timeout: 30_000,
      interval: 100,
    });
    expect(await backend.list()).toContain(a);
    await backend.destroy(b);
  });

  it('adopts the Secret and Pod a crashed provisioning left behind', async () => {
    const c = newSandboxId();
    const input = provisionInput(c, AbortSignal.timeout(120_000));
    // What a worker killed mid-provision leaves: the Secret and the Pod, no database record.
    const token = newGuestToken();
    await kube.core.createNamespacedSecret({
      namespace: kube.namespace,
      body: buildGuestSecret(input, kube.namespace, token),
    });
    const created = await kube.core.createNamespacedPod({
      namespace: kube.namespace,
      body: buildSandboxPod(input, { namespace: kube.namespace }),
    });
    const up = await backend.provision(input);
    expect(up.guestToken).toBe(token);
    const pod = await readPod(sandboxObjectName(c));
    expect(pod.metadata?.uid).toBe(created.metadata?.uid);
    const authed = await fetch(`${up.guestUrl}/v1/windows`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(authed.status).toBe(200);
    await backend.destroy(c);
  });

  it("a pool's placement reaches the Pod: RuntimeClass (admitted by the API server), selector, tolerations", async () => {
    const { NodeV1Api } = await import('@kubernetes/client-node');
    await kube.cluster.kubeconfig
      .makeApiClient(NodeV1Api)
      .createRuntimeClass({ body: { metadata: { name: 'gvisor' }, handler: 'runsc' } })
      .catch((e: unknown) => {
        if (status(e) !== 409) throw e;
      });
    const p = newSandboxId();
    const up = await backend.provision({
      ...provisionInput(p, AbortSignal.timeout(120_000)),
      kubernetes: {
        runtime_class_name: 'gvisor',
        node_selector: { 'cubicle.dev/desktops': 'true' },
        tolerations: [{ key: 'desktops', operator: 'Exists', effect: 'NoSchedule' }],
      },
    });
    const pod = await readPod(up.ref);
    expect(pod.spec?.runtimeClassName).toBe('gvisor');
    expect(pod.spec?.nodeSelector).toEqual({ 'cubicle.dev/desktops': 'true' });
    expect(pod.spec?.tolerations).toContainEqual({
      key: 'desktops',
      operator: 'Exists',
      effect: 'NoSchedule',
    });
    await backend.destroy(p);
    // An unknown RuntimeClass is refused by the API server's admission, and provisioning says so.
    const q = newSandboxId();
    await expect(
      backend.provision({
        ...provisionInput(q, AbortSignal.timeout(60_000)),
        kubernetes: { runtime_class_name: 'does-not-exist' },
      }),
    ).rejects.toThrow(/RuntimeClass/);
    await backend.destroy(q);
  });

  it('destroy deletes Pod and Secret, stops the desktop, and is idempotent', async () => {
    const name = sandboxObjectName(a);
    expect(kube.agent.workload('Pod', name)).toBeDefined();
    await backend.destroy(a);
    await backend.destroy(a);
    await vi.waitFor(async () => expect(await backend.list()).not.toContain(a), {
      timeout: 30_000,
      interval: 100,
    });
    // Gone, or on its way out with a deletion grace period (as with a real kubelet).
    const pod = await readPod(name).catch((e: unknown) => e);
    if (status(pod) !== 404) expect((pod as V1Pod).metadata?.deletionTimestamp).toBeDefined();
    await vi.waitFor(() => expect(kube.agent.workload('Pod', name)).toBeUndefined(), {
      timeout: 30_000,
      interval: 100,
    });
    const secretErr = await kube.core
      .readNamespacedSecret({ name: guestSecretName(a), namespace: kube.namespace })
      .catch((e: unknown) => e);
    expect(status(secretErr)).toBe(404);
  });

  it('provision honours its AbortSignal', async () => {
    const e = newSandboxId();
    const ctl = new AbortController();
    const pending = backend.provision(provisionInput(e, ctl.signal));
    ctl.abort(new Error('provisioning deadline'));
    await expect(pending).rejects.toThrow('provisioning deadline');
    await backend.destroy(e);
  });
  // Last: the node agent's own watches may need a moment after the restart; nothing after this
  // test depends on it.
  it('the informer recovers after the API server restarts and sees what changed after', async () => {
    const informer = await backend.informer();
    const watchesBefore = informer.stats.watches;
    await kube.cluster.restartApiServer();
    // Changes after the restart must reach list(): a Pod deleted behind the backend's back.
    const d = newSandboxId();
    await kube.core.createNamespacedPod({
      namespace: kube.namespace,
      body: buildSandboxPod(provisionInput(d, AbortSignal.timeout(1)), {
        namespace: kube.namespace,
      }),
    });
    await vi.waitFor(async () => expect(await backend.list()).toContain(d), {
      timeout: 60_000,
      interval: 200,
    });
    await kube.core.deleteNamespacedPod({ name: sandboxObjectName(d), namespace: kube.namespace });
    await vi.waitFor(async () => expect(await backend.list()).not.toContain(d), {
      timeout: 60_000,
      interval: 200,
    });
    expect(informer.stats.watches).toBeGreaterThan(watchesBefore);
    await backend.destroy(d);
  });
});
