// The kubevirt backend against a real kube-apiserver with the project's minimal KubeVirt CRDs;
// the test node agent plays virt-handler and runs each VMI as a real local desktop.
import { CustomObjectsApi, loadYaml } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createKubevirtBackend,
  guestSecretName,
  sandboxObjectName,
  type KubeSandboxBackend,
} from '../src/index.js';
import {
  newSandboxId,
  provisionInput,
  startKubeFixture,
  VMI_API,
  type KubeFixture,
} from './kube-fixture.js';

let kube: KubeFixture;
let backend: KubeSandboxBackend;
let custom: CustomObjectsApi;

beforeAll(async () => {
  kube = await startKubeFixture();
  custom = kube.cluster.kubeconfig.makeApiClient(CustomObjectsApi);
  backend = createKubevirtBackend({ client: kube.client, namespace: kube.namespace });
}, 180_000);

afterAll(async () => {
  await backend?.close();
  await kube?.stop();
}, 120_000);

const readVmi = (name: string) =>
  custom.getNamespacedCustomObject({ ...VMI_API, namespace: kube.namespace, name }) as Promise<{
    metadata: { labels: Record<string, string>; uid: string };
    status?: { phase?: string };
  }>;

describe('kubevirt backend', () => {
  const a = newSandboxId();

  it('provisions a VMI that runs, has an address, and whose guest answers with the Secret token', async () => {
    const up = await backend.provision(provisionInput(a, AbortSignal.timeout(120_000)));
    expect(up.ref).toBe(sandboxObjectName(a));
    const ip = new URL(up.guestUrl).hostname;
    expect(up.vncEndpoint).toBe(`${ip}:5900`);
    const authed = await fetch(`${up.guestUrl}/v1/windows`, {
      headers: { authorization: `Bearer ${up.guestToken}` },
    });
    expect(authed.status).toBe(200);

    const vmi = await readVmi(up.ref);
    expect(vmi.status?.phase).toBe('Running');
    expect(vmi.metadata.labels['cubicle.dev/sandbox']).toBe(a);
    expect(JSON.stringify(vmi)).not.toContain(up.guestToken);
    // cloud-init's user data sits beside the token in the Secret.
    const secret = await kube.core.readNamespacedSecret({
      name: guestSecretName(a),
      namespace: kube.namespace,
    });
    const decode = (key: string) => Buffer.from(secret.data?.[key] ?? '', 'base64').toString();
    expect(decode('token')).toBe(up.guestToken);
    const userdata = decode('userdata');
    expect(userdata.startsWith('#cloud-config\n')).toBe(true);
    const files = loadYaml<{ write_files: { path: string; content: string }[] }>(
      userdata,
    ).write_files;
    expect(files.find((f) => f.path === '/etc/cubicle/guest.env')?.content).toContain(
      `CUBICLE_GUEST_TOKEN='${up.guestToken}'`,
    );
    expect(await backend.list()).toContain(a);
  });

  it('markClaimed flips the VMI state label', async () => {
    await backend.markClaimed(a);
    expect((await readVmi(sandboxObjectName(a))).metadata.labels['cubicle.dev/state']).toBe(
      'claimed',
    );
  });

  it('a VMI deleted behind its back disappears from list(); destroy is idempotent', async () => {
    const name = sandboxObjectName(a);
    await custom.deleteNamespacedCustomObject({ ...VMI_API, namespace: kube.namespace, name });
    await vi.waitFor(async () => expect(await backend.list()).not.toContain(a), {
      timeout: 30_000,
      interval: 100,
    });
    await vi.waitFor(
      () => expect(kube.agent.workload('VirtualMachineInstance', name)).toBeUndefined(),
      {
        timeout: 30_000,
        interval: 100,
      },
    );
    await backend.destroy(a);
    await backend.destroy(a);
    const secretErr = await kube.core
      .readNamespacedSecret({ name: guestSecretName(a), namespace: kube.namespace })
      .catch((e: unknown) => e);
    expect((secretErr as { code?: number }).code).toBe(404);
  });
});
