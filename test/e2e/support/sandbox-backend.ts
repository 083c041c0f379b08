// Which backend an e2e stack's worker drives, and how a test sees the desktops it runs. The
// local backend runs sessions on this machine; kubernetes and kubevirt run against a real
// kube-apiserver whose test node agent runs each Pod/VMI as a local desktop.
import {
  buildGuestSecret,
  buildSandboxPod,
  buildSandboxVmi,
  desktopIdOf,
  newGuestToken,
  LABELS,
  localBackendScope,
  sandboxIdOfObjectName,
  sandboxObjectName,
} from '@cubicle/backends';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { newId } from '@cubicle/db';
import { listDesktopIds, startDesktop, stopDesktopById } from '@cubicle/driver-guest';
import {
  startKubeCluster,
  startNodeAgent,
  VMI_API,
  type KubeCluster,
  type NodeAgent,
} from '../../harness/kube/index.js';

export type E2eBackendKind = 'local' | 'kubernetes' | 'kubevirt';

export interface E2eBackend {
  kind: E2eBackendKind;
  /** Added to the worker's environment. */
  workerEnv: Record<string, string>;
  /** Merged into every pool spec the suites PUT (image and backend). */
  pool: { image: string; backend?: E2eBackendKind };
  /** Sandbox ids whose desktops run right now. */
  liveSandboxIds(): Promise<Set<string>>;
  /** Takes a sandbox's desktop away behind the control plane's back (a crash, a `kubectl delete`). */
  loseSandbox(sandboxId: string): Promise<void>;
  /**
   * Starts a desktop for a sandbox id the database does not know, as a crashed control plane
   * would leave it; returns that id. The worker's sweep must remove it.
   */
  plantOrphan(): Promise<string>;
  /** Whether the backend still holds the sandbox (a desktop session; a Pod/VMI not being deleted). */
  holds(sandboxId: string): Promise<boolean>;
  /** Kubernetes backends: the sandbox object's `cubicle.dev/state` label (undefined when gone). */
  stateLabel?(sandboxId: string): Promise<string | undefined>;
  /** Kubernetes backends: the test cluster (raw requests, e.g. the chart's objects). */
  cluster?: KubeCluster;
  close(): Promise<void>;
}

/**
 * e2eBackends lists the backends the parameterised suites run against: CUBICLE_E2E_BACKENDS
 * (comma-separated) or all three.
 */
export function e2eBackends(): E2eBackendKind[] {
  const wanted = (process.env.CUBICLE_E2E_BACKENDS ?? 'local,kubernetes,kubevirt')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const kind of wanted)
    if (!['local', 'kubernetes', 'kubevirt'].includes(kind))
      throw new Error(`CUBICLE_E2E_BACKENDS: unknown backend ${kind}`);
  return wanted as E2eBackendKind[];
}

export async function startE2eBackend(
  kind: E2eBackendKind,
  databaseUrl: string,
): Promise<E2eBackend> {
  if (kind === 'local') {
    const scope = localBackendScope(databaseUrl);
    const prefix = desktopIdOf(scope, '');
    return {
      kind,
      workerEnv: { CUBICLE_BACKENDS: 'local' },
      pool: { image: 'local' },
      liveSandboxIds: async () =>
        new Set(
          (await listDesktopIds())
            .filter((id) => id.startsWith(prefix))
            .map((id) => id.slice(prefix.length)),
        ),
      loseSandbox: (sandboxId) => stopDesktopById(desktopIdOf(scope, sandboxId)),
      holds: async (sandboxId) => (await listDesktopIds()).includes(desktopIdOf(scope, sandboxId)),
      async plantOrphan() {
        // A live worker's sweep may find the desktop while it is still starting (its periodic
        // full scan reads every process's marker) and stop it: that is the sweep doing its job,
        // but the start then fails. Plant another; a started one has run, which is what callers
        // need to know.
        for (let attempt = 1; ; attempt++) {
          const id = newId('sandbox');
          try {
            // The session outlives this handle: only its marker (the id) matters to the sweep.
            await startDesktop({ id: desktopIdOf(scope, id), daemon: 'none' });
            return id;
          } catch (err) {
            await stopDesktopById(desktopIdOf(scope, id));
            if (attempt === 3) throw err;
          }
        }
      },
      close: async () => undefined,
    };
  }
  const cluster: KubeCluster = await startKubeCluster({ withKubevirt: kind === 'kubevirt' });
  let agent: NodeAgent | undefined;
  try {
    const namespace = await cluster.createNamespace();
    agent = await startNodeAgent({
      kubeconfig: cluster.kubeconfig,
      namespace,
      withKubevirt: kind === 'kubevirt',
    });
    const started = agent;
    const readObject = (sandboxId: string) => {
      const name = sandboxObjectName(sandboxId);
      const read =
        kind === 'kubernetes'
          ? cluster.kubeconfig.makeApiClient(CoreV1Api).readNamespacedPod({ name, namespace })
          : (cluster.kubeconfig.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
              ...VMI_API,
              namespace,
              name,
            }) as Promise<{
              metadata?: { labels?: Record<string, string>; deletionTimestamp?: unknown };
            }>);
      return read.catch(() => undefined);
    };
    return {
      kind,
      workerEnv: {
        CUBICLE_BACKENDS: kind,
        KUBECONFIG: cluster.kubeconfigPath,
        KUBE_NAMESPACE: namespace,
      },
      pool: { image: 'registry.example/cubicle/desktop:e2e', backend: kind },
      cluster,
      liveSandboxIds: async () =>
        new Set(
          started
            .workloads()
            .map((w) => sandboxIdOfObjectName(w.name))
            .filter((id): id is string => id !== null),
        ),
      async loseSandbox(sandboxId) {
        const name = sandboxObjectName(sandboxId);
        if (kind === 'kubernetes')
          await cluster.kubeconfig
            .makeApiClient(CoreV1Api)
            .deleteNamespacedPod({ name, namespace });
        else
          await cluster.kubeconfig.makeApiClient(CustomObjectsApi).deleteNamespacedCustomObject({
            ...VMI_API,
            namespace,
            name,
          });
      },
      async plantOrphan() {
        const id = newId('sandbox');
        const template = {
          sandboxId: id,
          tenantId: newId('tenant'),
          poolId: newId('pool'),
          image: 'registry.example/cubicle/desktop:e2e',
          cpuMillis: 500,
          memoryMb: 1024,
          env: {},
        };
        const core = cluster.kubeconfig.makeApiClient(CoreV1Api);
        await core.createNamespacedSecret({
          namespace,
          body: buildGuestSecret(template, namespace, newGuestToken()),
        });
        if (kind === 'kubernetes')
          await core.createNamespacedPod({
            namespace,
            body: buildSandboxPod(template, { namespace }),
          });
        else
          await cluster.kubeconfig.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
            ...VMI_API,
            namespace,
            body: buildSandboxVmi(template, { namespace }),
          });
        return id;
      },
      async holds(sandboxId) {
        const obj = await readObject(sandboxId);
        return obj !== undefined && !obj.metadata?.deletionTimestamp;
      },
      async stateLabel(sandboxId) {
        return (await readObject(sandboxId))?.metadata?.labels?.[LABELS.state];
      },
      async close() {
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
