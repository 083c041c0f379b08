// The test cluster's node: a stand-in for kubelet (Pods) and virt-handler (VirtualMachineInstances)
// that runs each object of one namespace as a real local desktop session in its own sandbox
// (startDesktop `sandbox` mode: the same isolation as the local backend's desktops), with the
// object's guest and VNC ports forwarded from its own loopback IP. See the contract in
// test/harness/kube/README.md.
import { CoreV1Api, CustomObjectsApi, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { startDesktop, stopDesktopById, type DesktopSession } from '@cubicle/driver-guest';
import {
  processStartTime,
  startReaper,
  type Reaper,
} from '../../../packages/embedded/src/index.js';
import {
  bind,
  finishPodDeletion,
  NODE_NAME,
  podRef,
  readRef,
  vmiRef,
  type ObjectRef,
  type WorkloadKind,
} from './object-refs.js';
import { agentDesktopId, stopOrphanedDesktops } from './stale-desktops.js';
import { startInformer, type Informer, type WatchEventType } from './informer.js';
import { createLoopbackIpPool, type LoopbackIpPool } from './loopback-ips.js';
import {
  podWorkload,
  vmiWorkload,
  WorkloadConfigError,
  type VmiObject,
  type WorkloadSpec,
} from './workload-spec.js';
import { updateVmiStatus, VMI_API, writePodStatus } from './write-status.js';
import { waitForProbe } from './probe.js';
import { forwardPodPorts, type PodNetwork } from './pod-network.js';
import {
  isControlPlanePod,
  startControlPlaneWorkload,
  type ControlPlaneWorkload,
} from './control-plane-workload.js';
import { rawClient } from './dry-run.js';
import type { KubeCluster } from './start-cluster.js';

export { NODE_NAME, type WorkloadKind } from './object-refs.js';

/** The socket of an `http+unix://` guest URL (what startDesktop's sandbox mode returns). */
const socketOf = (guestUrl: string) => decodeURIComponent(new URL(guestUrl).hostname);

export interface RunningWorkload {
  kind: WorkloadKind;
  name: string;
  uid: string;
  /** The object's own loopback IP; the guest driver listens on <ip>:guestPort, x11vnc on <ip>:vncPort. */
  ip: string;
  spec: WorkloadSpec;
  /** The desktop session (id `kube-<agent pid>_<start>-<uid>`, see stale-desktops.ts). */
  session: DesktopSession;
  /** The object's TCP ports on `ip`, forwarded to the sandbox's sockets. */
  network: PodNetwork;
  /** True once the readiness probe answered and Ready was reported. */
  isReady: boolean;
}

export interface NodeAgentOptions {
  kubeconfig: KubeConfig;
  namespace: string;
  /** Watch VirtualMachineInstances too (needs the KubeVirt CRDs; default true). */
  withKubevirt?: boolean;
  /** Screen size of the desktops (default 1280x800). */
  width?: number;
  height?: number;
  log?: (line: string) => void;
  /**
   * Desktops starting at once (default 4); more wait their turn. Each start has a deadline
   * (startDesktop's 30 s): a burst of Pods all starting together on a loaded 2-core machine
   * misses it one after another and none gets up, where starting a few at a time gets them all.
   */
  maxConcurrentStarts?: number;
  /**
   * Run Pods of Cubicle's own images (api, worker, web) as the matching local processes
   * (control-plane-workload.ts); the cluster gives the kubelet's access (tokens, Secrets).
   */
  cluster?: KubeCluster;
}

/** A control-plane Pod's process and how it ended. */
export interface ControlPlaneProcess {
  name: string;
  uid: string;
  workload: ControlPlaneWorkload;
}

export interface NodeAgent {
  readonly nodeName: string;
  readonly namespace: string;
  /** Resolves once the first lists were processed (objects existing before the start are handled). */
  readonly synced: Promise<void>;
  /** The desktop running for an object, if any. */
  workload(kind: WorkloadKind, name: string): RunningWorkload | undefined;
  workloads(): RunningWorkload[];
  /** Control-plane Pods the agent runs or ran (until deleted): output, exit code. */
  controlPlanePods(): ControlPlaneProcess[];
  /** Exit codes of control-plane Pods stopped because they were deleted, oldest first. */
  readonly stoppedControlPlanePods: { name: string; code: number | null; output: string }[];
  /** stop ends the watches and every desktop the agent started; idempotent. */
  stop(): Promise<void>;
}

/** startNodeAgent watches `namespace` and runs its Pods and VMIs until stop(). */
export async function startNodeAgent(options: NodeAgentOptions): Promise<NodeAgent> {
  const { kubeconfig, namespace } = options;
  const log = options.log ?? (() => {});
  const core = kubeconfig.makeApiClient(CoreV1Api);
  const custom = kubeconfig.makeApiClient(CustomObjectsApi);
  const ips: LoopbackIpPool = createLoopbackIpPool();
  // Desktops are killed by startDesktop's exit hook on a normal exit; the reaper covers SIGKILL.
  const reaper: Reaper = startReaper();
  // ...and the desktops of agents killed while one was still starting are stopped here.
  const orphans = await stopOrphanedDesktops();
  if (orphans.length > 0) log(`node agent: stopped ${orphans.length} desktop(s) of dead agents`);
  const running = new Map<string, RunningWorkload>();
  const controlPlane = new Map<string, ControlPlaneProcess>();
  const stoppedControlPlanePods: NodeAgent['stoppedControlPlanePods'] = [];
  const queues = new Map<string, Promise<void>>();
  const retryTimers = new Set<NodeJS.Timeout>();
  let isStopped = false;
  const keyOf = (kind: WorkloadKind, name: string) => `${kind}/${name}`;

  /** Work on one object runs in order; different objects proceed in parallel. */
  const enqueue = (key: string, work: () => Promise<void>) => {
    const next = (queues.get(key) ?? Promise.resolve())
      .then(work)
      .catch((error: unknown) => log(`node agent: ${key}: ${(error as Error).message}`));
    queues.set(key, next);
    void next.finally(() => {
      if (queues.get(key) === next) queues.delete(key);
    });
  };

  const teardown = async (key: string) => {
    const held = controlPlane.get(key);
    if (held) {
      controlPlane.delete(key);
      // kubelet on delete: SIGTERM, and the Pod is gone once the process has drained and exited.
      const code = await held.workload.stop();
      stoppedControlPlanePods.push({
        name: held.name,
        code,
        output: held.workload.pod.output(),
      });
      log(`node agent: stopped ${key} (exit ${code})`);
      return;
    }
    const workload = running.get(key);
    if (!workload) return;
    running.delete(key);
    await workload.network.close();
    await workload.session.stop();
    // The session's marker finds whatever escaped its process groups (a11y bus activations).
    await stopDesktopById(workload.session.id);
    if (workload.session.sandbox) reaper.unwatch(workload.session.sandbox.initPid);
    ips.release(workload.ip);
    log(`node agent: stopped ${key} (${workload.ip})`);
  };

  const reportStarted = async (ref: ObjectRef, workload: RunningWorkload, startedAt: Date) => {
    log(`node agent: ${ref.kind}/${ref.name} Running, ready=${workload.isReady}`);
    if (ref.kind === 'Pod') {
      await writePodStatus(core, namespace, ref.name, ref.uid, {
        phase: 'Running',
        ip: workload.ip,
        isReady: workload.isReady,
        spec: workload.spec,
        desktopId: workload.session.id,
        startedAt,
      });
      return;
    }
    await updateVmiStatus(custom, namespace, ref.name, ref.uid, (status) => {
      status.nodeName = NODE_NAME;
      status.phase = 'Running';
      status.interfaces = [{ name: 'default', ipAddress: workload.ip, ipAddresses: [workload.ip] }];
      status.conditions = [
        {
          type: 'Ready',
          status: workload.isReady ? 'True' : 'False',
          lastTransitionTime: new Date().toISOString(),
        },
      ];
    });
  };

  const startSlots = slots(options.maxConcurrentStarts ?? 4);
  // Failed starts of each object so far: its next retry waits longer, as kubelet's back-off does
  // (1 s doubling to 30 s here, 10 s to 5 min there).
  const startFailures = new Map<string, number>();
  const scheduleRetry = (ref: ObjectRef, key: string, delayMs = 1000) => {
    const timer = setTimeout(() => {
      retryTimers.delete(timer);
      if (!isStopped)
        enqueue(key, async () => reconcile(await readRef(core, custom, namespace, ref), key));
    }, delayMs);
    retryTimers.add(timer);
  };

  /**
   * startFailed reports a desktop that did not start (on a loaded machine: a display or daemon
   * that missed its start-up deadline) as kubelet reports a container that failed to run —
   * Pending with a waiting reason — and tries again after a back-off. Left alone, the Pod would
   * stay Pending for good and hold a provisioning slot of the worker until its job times out.
   */
  const startFailed = async (ref: ObjectRef, key: string, error: unknown) => {
    const failures = (startFailures.get(key) ?? 0) + 1;
    startFailures.set(key, failures);
    const message = (error as Error).message;
    log(`node agent: ${key} failed to start (attempt ${failures}): ${message}`);
    if (ref.kind === 'Pod') {
      await writePodStatus(core, namespace, ref.name, ref.uid, {
        phase: 'Pending',
        reason: 'RunContainerError',
        message,
      }).catch(() => undefined);
    }
    scheduleRetry(ref, key, Math.min(30_000, 1000 * 2 ** (failures - 1)));
  };

  const startControlPlane = async (ref: ObjectRef, key: string) => {
    const cluster = options.cluster;
    if (!cluster) throw new Error(`${key} runs a Cubicle image: start the agent with cluster`);
    // Set once the workload has started; the probe below reads it through the holder.
    const held: { entry?: ControlPlaneProcess } = {};
    // Wanted while it starts, then while it is the one the agent holds for this key.
    const isWanted = () =>
      !isStopped && (held.entry === undefined || controlPlane.get(key) === held.entry);
    const workload = await startControlPlaneWorkload(
      { cluster, client: rawClient(cluster), core, namespace, ips, log },
      ref.object as V1Pod,
      isWanted,
    );
    held.entry = { name: ref.name, uid: ref.uid, workload };
    controlPlane.set(key, held.entry);
  };

  const start = async (ref: ObjectRef, key: string) => {
    if (ref.kind === 'Pod' && isControlPlanePod(ref.object as V1Pod))
      return startControlPlane(ref, key);
    let spec: WorkloadSpec;
    try {
      spec =
        ref.kind === 'Pod'
          ? await podWorkload(core, ref.object as V1Pod)
          : await vmiWorkload(core, ref.object as VmiObject);
    } catch (error) {
      if (!(error instanceof WorkloadConfigError)) throw error;
      log(`node agent: ${key} cannot start yet: ${error.message}`);
      if (ref.kind === 'Pod') {
        await writePodStatus(core, namespace, ref.name, ref.uid, {
          phase: 'Pending',
          reason: 'CreateContainerConfigError',
          message: error.message,
        }).catch(() => undefined);
      }
      scheduleRetry(ref, key);
      return;
    }
    const ip = await ips.allocate([spec.guestPort, spec.vncPort]);
    const startedAt = new Date();
    let session: DesktopSession;
    let network: PodNetwork;
    try {
      session = await startSlots(() =>
        startDesktop({
          id: agentDesktopId(ref.uid),
          daemon: 'sandbox',
          guestToken: spec.guestToken,
          appEnv: spec.appEnv,
          width: options.width ?? 1280,
          height: options.height ?? 800,
        }),
      );
    } catch (error) {
      ips.release(ip);
      return startFailed(ref, key, error);
    }
    try {
      network = await forwardPodPorts(ip, [
        { port: spec.guestPort, socketPath: socketOf(session.guestUrl!) },
        { port: spec.vncPort, socketPath: session.vncSocket! },
      ]);
    } catch (error) {
      await session.stop();
      ips.release(ip);
      return startFailed(ref, key, error);
    }
    startFailures.delete(key);
    // SIGKILL of the sandbox's PID 1 ends all of it, should this process be killed.
    const initPid = session.sandbox!.initPid;
    reaper.watch({
      pid: initPid,
      startTime: processStartTime(initPid),
      stopSignal: 'SIGKILL',
      isGroupLeader: false,
    });
    const workload: RunningWorkload = {
      kind: ref.kind,
      name: ref.name,
      uid: ref.uid,
      ip,
      spec,
      session,
      network,
      isReady: false,
    };
    running.set(key, workload);
    log(`node agent: started ${key} on ${ip} (desktop ${session.id})`);
    await reportStarted(ref, workload, startedAt);
    // The readiness probe runs outside the object's queue so a delete is not held up by it.
    void waitForProbe(
      `http://${ip}:${spec.probePort}${spec.probePath}`,
      () => running.get(key) === workload,
    ).then(async (isUp) => {
      if (!isUp || isStopped || running.get(key) !== workload) return;
      workload.isReady = true;
      enqueue(key, () => reportStarted(ref, workload, startedAt));
    });
  };

  const reconcile = async (ref: ObjectRef | null, key = ref ? keyOf(ref.kind, ref.name) : '') => {
    if (isStopped) return;
    const current = running.get(key) ?? controlPlane.get(key);
    if (!ref || ref.isDeleting || (current && current.uid !== ref.uid)) await teardown(key);
    if (!ref) {
      startFailures.delete(key);
      return;
    }
    if (ref.isDeleting) {
      if (ref.kind === 'Pod' && (ref.nodeName === NODE_NAME || !ref.nodeName))
        await finishPodDeletion(core, namespace, ref);
      return;
    }
    if (!ref.nodeName) return bind(core, custom, namespace, ref);
    if (ref.nodeName !== NODE_NAME || running.has(key) || controlPlane.has(key)) return;
    await start(ref, key);
  };

  const handle = (ref: ObjectRef, type: WatchEventType) => {
    const key = keyOf(ref.kind, ref.name);
    enqueue(key, () => (type === 'DELETED' ? reconcile(null, key) : reconcile(ref)));
  };

  const handleList = (kind: WorkloadKind, refs: ObjectRef[]) => {
    const present = new Set(refs.map((ref) => keyOf(ref.kind, ref.name)));
    for (const workload of [...running.values(), ...controlPlane.values()]) {
      const key = keyOf('kind' in workload ? workload.kind : 'Pod', workload.name);
      // Deleted while no watch was open (an API server restart): stop it now.
      if (key.startsWith(`${kind}/`) && !present.has(key)) enqueue(key, () => reconcile(null, key));
    }
    for (const ref of refs) handle(ref, 'MODIFIED');
  };

  const informers: Informer[] = [
    startInformer<V1Pod>({
      kubeconfig,
      path: `/api/v1/namespaces/${namespace}/pods`,
      list: async () => {
        const list = await core.listNamespacedPod({ namespace });
        return { items: list.items, resourceVersion: list.metadata?.resourceVersion };
      },
      onList: (items) => handleList('Pod', items.map(podRef)),
      onError: (error) => log(`node agent: pods list/watch: ${(error as Error).message}`),
      onEvent: (type, pod) => handle(podRef(pod), type),
    }),
  ];
  if (options.withKubevirt ?? true) {
    informers.push(
      startInformer<VmiObject>({
        kubeconfig,
        path: `/apis/kubevirt.io/v1/namespaces/${namespace}/virtualmachineinstances`,
        list: async () => {
          const list = (await custom.listNamespacedCustomObject({ ...VMI_API, namespace })) as {
            items: VmiObject[];
            metadata?: { resourceVersion?: string };
          };
          return { items: list.items, resourceVersion: list.metadata?.resourceVersion };
        },
        onList: (items) => handleList('VirtualMachineInstance', items.map(vmiRef)),
        onError: (error) => log(`node agent: VMI list/watch: ${(error as Error).message}`),
        onEvent: (type, vmi) => handle(vmiRef(vmi), type),
      }),
    );
  }

  let stopping: Promise<void> | undefined;
  return {
    nodeName: NODE_NAME,
    namespace,
    synced: Promise.all(informers.map((informer) => informer.synced)).then(() => undefined),
    workload: (kind, name) => running.get(keyOf(kind, name)),
    workloads: () => [...running.values()],
    controlPlanePods: () => [...controlPlane.values()],
    stoppedControlPlanePods,
    stop: () =>
      (stopping ??= (async () => {
        isStopped = true;
        for (const informer of informers) informer.stop();
        for (const timer of retryTimers) clearTimeout(timer);
        await Promise.allSettled([...queues.values()]);
        await Promise.allSettled(
          [...running.keys(), ...controlPlane.keys()].map((key) => teardown(key)),
        );
        reaper.close();
      })()),
  };
}

/** slots runs at most `count` of the functions given to it at once, the others in turn. */
function slots(count: number): <T>(work: () => Promise<T>) => Promise<T> {
  let busy = 0;
  const waiting: (() => void)[] = [];
  return async (work) => {
    if (busy >= count) await new Promise<void>((resolve) => waiting.push(resolve));
    else busy++;
    try {
      return await work();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else busy--;
    }
  };
}
