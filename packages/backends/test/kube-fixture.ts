// Shared set-up of the Kubernetes backend suites: a real etcd + kube-apiserver, a fresh
// namespace, and the test node agent that runs each Pod/VMI as a real local desktop.
import { CoreV1Api } from '@kubernetes/client-node';
import {
  startKubeCluster,
  startNodeAgent,
  type KubeCluster,
  type NodeAgent,
} from '../../../test/harness/kube/index.js';

export { VMI_API } from '../../../test/harness/kube/index.js';
import { createKubeClient, loadKubeConfig, type KubeClient } from '../src/index.js';

export interface KubeFixture {
  cluster: KubeCluster;
  namespace: string;
  agent: NodeAgent;
  /** Our own REST client (the backends' path to the API server). */
  client: KubeClient;
  /** The generated client, used by tests to act behind the backend's back. */
  core: CoreV1Api;
  stop(): Promise<void>;
}

export async function startKubeFixture(): Promise<KubeFixture> {
  const cluster = await startKubeCluster();
  let agent: NodeAgent | undefined;
  try {
    const namespace = await cluster.createNamespace();
    agent = await startNodeAgent({ kubeconfig: cluster.kubeconfig, namespace });
    const client = createKubeClient(loadKubeConfig({ kubeconfigPath: cluster.kubeconfigPath }));
    const started = agent;
    return {
      cluster,
      namespace,
      agent,
      client,
      core: cluster.kubeconfig.makeApiClient(CoreV1Api),
      async stop() {
        client.close();
        await started.stop();
        await cluster.stop();
      },
    };
  } catch (err) {
    await agent?.stop().catch(() => undefined);
    await cluster.stop().catch(() => undefined);
    throw err;
  }
}

let counter = 0;
/** A fresh, valid sandbox id (sbx_ + 26 lowercase base32 characters). */
export function newSandboxId(): string {
  counter += 1;
  const stamp = Date.now().toString(32).padStart(10, '0');
  const rand = Math.random().toString(32).slice(2, 12).padEnd(10, '0');
  return `sbx_${(stamp + rand + counter.toString(32).padStart(6, '0')).slice(0, 26)}`;
}

export const provisionInput = (sandboxId: string, signal: AbortSignal) => ({
  sandboxId,
  tenantId: 'ten_01jxtesttenant000000000000',
  poolId: 'pool_01jxtestpool00000000000000',
  image: 'cubicle/desktop:test',
  cpuMillis: 500,
  memoryMb: 1024,
  env: { CUBICLE_TEST_VAR: 'hello' },
  signal,
});
