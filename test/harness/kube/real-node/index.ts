// A test cluster with a real node: etcd + kube-apiserver (start-cluster.ts), containerd + runc
// (containerd.ts), the CNI bridge (network.ts), kubelet + kube-scheduler (+ controller-manager)
// (kubelet.ts), and Cubicle's images from the registry-free build (scripts/images/build.mjs)
// imported into containerd. Needs root. stop() stops every process by PID (Pods first), removes
// the bridge, mounts, cgroups and host paths the node made and restores kubelet's sysctls; a
// node whose test process was SIGKILLed is cleaned up by the next start (host.ts).
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api } from '@kubernetes/client-node';
import { startReaper } from '../../../../packages/embedded/src/index.js';
import { ensureImages } from '../../../../scripts/images/build.mjs';
import { nodeToolPaths, waitForNodeTools } from '../../../../scripts/lib/kubelet-tools.mjs';
import type { ClusterProcess } from '../processes.js';
import { startKubeCluster, type KubeCluster } from '../start-cluster.js';
import { startContainerd, type Containerd } from './containerd.js';
import {
  cleanStaleNodes,
  forgetNode,
  lockServices,
  makeCgroupRoot,
  readSysctls,
  recordNode,
  undoHostChanges,
  unlockServices,
  type NodeRecord,
} from './host.js';
import { CLUSTER_DOMAIN, startClusterDns, type ClusterDns } from './dns.js';
import { startNodeProcesses, type NodeProcesses } from './kubelet.js';
import { createPodNetwork, type PodNetwork } from './network.js';
import { makeNodePki } from './pki.js';
import { netfilterBefore, openBridgeForServices, startKubeProxy } from './services.js';

export interface BuiltImage {
  name: string;
  ref: string;
  layout: string;
  size: number;
}

export interface RealNodeCluster {
  cluster: KubeCluster;
  nodeName: string;
  network: PodNetwork;
  containerd: Containerd;
  node: NodeProcesses;
  /** The imported images by build name (desktop-minimal, api, …): refs to put in Pod specs. */
  images: Record<string, BuiltImage>;
  /** Resolves when the `importLater` images are in containerd (at once when there are none). */
  importedLater: Promise<void>;
  /** kube-proxy and the cluster DNS, when started with `services`. */
  services?: { kubeProxy: ClusterProcess; dns: ClusterDns };
  /** Start-up phases in ms (images, import, cluster, node Ready). */
  timings: Record<string, number>;
  dir: string;
  stop(): Promise<void>;
}

/** Host paths kubelet, containerd and libcni create whatever their settings (removed after, if new). */
const HARD_CODED_PATHS = [
  '/run/containerd',
  '/var/lib/kubelet',
  '/var/log/containers',
  '/var/log/pods',
  '/var/lib/cni',
];

function requireBin(path: string, name: string): string {
  if (existsSync(path)) return path;
  throw new Error(
    `${name} is not built: ${path} is missing. \`npm test\` builds it during its bootstrap; to ` +
      'build it alone run `node scripts/lib/kubelet-tools.mjs` (the first build takes minutes).',
  );
}

export async function startRealNodeCluster(
  options: {
    images?: string[];
    withControllers?: boolean;
    /**
     * Services and cluster DNS (the Helm chart): the API server on the bridge address (Pods reach
     * it, through the `kubernetes` Service too), kube-proxy, the cluster DNS (dns.ts).
     */
    services?: boolean;
    /**
     * Images to import after the node is up, while the caller goes on (the chart installs while
     * the desktop image imports); `importedLater` resolves when they are in.
     */
    importLater?: string[];
    log?: (line: string) => void;
  } = {},
): Promise<RealNodeCluster> {
  const log = options.log ?? (() => {});
  if (process.getuid?.() !== 0) throw new Error('the real node needs root (containerd, kubelet)');
  await cleanStaleNodes(log);
  // `npm test` builds the node tools beside Vitest: a build still running is waited for.
  await waitForNodeTools({ log });
  const tools = nodeToolPaths();
  const bins = {
    kubelet: requireBin(tools.kubelet, 'kubelet'),
    'kube-scheduler': requireBin(tools['kube-scheduler'], 'kube-scheduler'),
    'kube-controller-manager': requireBin(
      tools['kube-controller-manager'],
      'kube-controller-manager',
    ),
  };
  const kubeProxyBin = options.services ? requireBin(tools['kube-proxy'], 'kube-proxy') : undefined;
  const timings: Record<string, number> = {};
  if (kubeProxyBin) await lockServices(log);
  let t = performance.now();
  const built = (await ensureImages(['pause', ...(options.images ?? ['desktop-minimal'])], {
    log,
  })) as Record<string, BuiltImage>;
  timings.images = performance.now() - t;

  const id = randomBytes(3).toString('hex');
  const dir = mkdtempSync(join(tmpdir(), 'cubicle-rn-'));
  const reaper = startReaper();
  const record: NodeRecord = {
    pid: process.pid,
    dir,
    bridge: `crn-${id}`,
    cgroupRoot: `cubicle-kubelet-${id}`,
    sysctls: readSysctls(),
    createdPaths: HARD_CODED_PATHS.filter((path) => !existsSync(path)),
    kubeProxy: kubeProxyBin,
    netfilter: kubeProxyBin ? await netfilterBefore() : undefined,
  };
  recordNode(record);
  let cluster: KubeCluster | undefined;
  let containerd: Containerd | undefined;
  let node: NodeProcesses | undefined;
  let network: PodNetwork | undefined;
  let services: RealNodeCluster['services'];
  let kubeProxyProcess: ClusterProcess | undefined;
  let dns: ClusterDns | undefined;
  let deferred: Promise<void> = Promise.resolve();
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      const t0 = performance.now();
      const phase = (what: string) =>
        log(`real node stop: ${what} at ${(performance.now() - t0).toFixed(0)} ms`);
      await deferred.catch(() => undefined);
      if (cluster && node) {
        // Pods first, through kubelet, so it tears down their sandboxes (CNI DEL, mounts).
        const core = cluster.kubeconfig.makeApiClient(CoreV1Api);
        const pods = await core.listPodForAllNamespaces().catch(() => ({ items: [] }));
        await Promise.all(
          pods.items.map((pod) =>
            core
              .deleteNamespacedPod({
                name: pod.metadata!.name!,
                namespace: pod.metadata!.namespace!,
                body: { gracePeriodSeconds: 0 },
              })
              .catch(() => undefined),
          ),
        );
        for (let i = 0; i < 60 && containerd; i += 1) {
          const tasks = await containerd.ctr(['tasks', 'ls', '-q']).catch(() => '');
          if (tasks.trim() === '') break;
          await sleep(250);
        }
      }
      phase('pods gone');
      await Promise.allSettled([
        kubeProxyProcess?.stop(),
        dns?.close(),
        node?.controllerManager?.stop(),
        node?.scheduler.stop(),
        node?.kubelet.stop(),
      ]);
      phase('kubelet stopped');
      await containerd?.process.stop().catch(() => undefined);
      phase('containerd stopped');
      await cluster?.stop().catch(() => undefined);
      phase('cluster stopped');
      // Shims, mounts (rootfs, netns, emptyDirs), kube-proxy's rules and the guard rule, bridge,
      // sysctls, cgroups, host paths.
      await undoHostChanges(record, log);
      if (network && existsSync('/var/lib/cni/results')) {
        for (const file of readdirSync('/var/lib/cni/results'))
          if (file.startsWith(`${network.name}-`))
            rmSync(join('/var/lib/cni/results', file), { force: true });
      }
      forgetNode(process.pid);
      if (kubeProxyBin) unlockServices();
      reaper.close();
      phase('host restored');
    })());

  try {
    t = performance.now();
    const pki = await makeNodePki(dir);
    // With Services the bridge comes first: the API server listens on its host address.
    if (options.services) network = await createPodNetwork(dir, id, { services: true });
    cluster = await startKubeCluster({
      withKubevirt: false,
      log,
      ...(network
        ? { podReachable: { address: network.hostIp, serviceCidr: network.serviceCidr } }
        : {}),
      apiserverArgs: [
        `--kubelet-client-certificate=${pki.apiserverClientCert}`,
        `--kubelet-client-key=${pki.apiserverClientKey}`,
        '--kubelet-preferred-address-types=InternalIP',
      ],
    });
    timings.cluster = performance.now() - t;
    network ??= await createPodNetwork(dir, id);
    makeCgroupRoot(record.cgroupRoot);
    t = performance.now();
    containerd = await startContainerd({
      dir: join(dir, 'containerd'),
      cniConfDir: network.confDir,
      pauseRef: built.pause!.ref,
      reaper,
    });
    // Two imports at a time: each is part hashing (CPU), part writing (disk wait).
    const importAll = (images: BuiltImage[]) => {
      const queue = [...images];
      const importNext = async (): Promise<void> => {
        const image = queue.shift();
        if (!image) return;
        const ms = await containerd!.importLayout(image.layout);
        log(
          `imported ${image.ref} (${(image.size / 1048576).toFixed(0)} MiB) in ${ms.toFixed(0)} ms`,
        );
        await importNext();
      };
      return Promise.all([importNext(), importNext()]).then(() => undefined);
    };
    const later = new Set(options.importLater ?? []);
    await importAll(Object.values(built).filter((image) => !later.has(image.name)));
    timings.import = performance.now() - t;
    if (later.size > 0) {
      const started = performance.now();
      deferred = importAll(Object.values(built).filter((image) => later.has(image.name))).then(
        () => {
          timings.importLater = performance.now() - started;
        },
      );
      // Awaited by the caller (importedLater) or by stop(); never an unhandled rejection.
      deferred.catch(() => undefined);
    }
    t = performance.now();
    const nodeName = `cubicle-node-${id}`;
    node = await startNodeProcesses({
      dir: join(dir, 'kubelet'),
      bins,
      server: cluster.server,
      token: cluster.token,
      caPem: readFileSync(join(cluster.dir, 'certs', 'apiserver.crt'), 'utf8'),
      clientCaFile: pki.caCert,
      containerdSocket: containerd.socket,
      hostIp: network.hostIp,
      cgroupRoot: record.cgroupRoot,
      nodeName,
      reaper,
      withControllers: options.withControllers
        ? { serviceAccountKeyFile: join(cluster.dir, 'certs', 'service-account.key') }
        : undefined,
      clusterDns: options.services
        ? { address: network.hostIp, domain: CLUSTER_DOMAIN }
        : undefined,
    });
    if (kubeProxyBin) {
      await openBridgeForServices(network);
      dns = await startClusterDns(cluster.kubeconfig, network.hostIp);
      kubeProxyProcess = await startKubeProxy({
        bin: kubeProxyBin,
        dir: join(dir, 'kubelet'),
        kubeconfig: join(dir, 'kubelet', 'kubeconfig'),
        nodeName,
        network,
        reaper,
      });
      services = { kubeProxy: kubeProxyProcess, dns };
    }
    const core = cluster.kubeconfig.makeApiClient(CoreV1Api);
    const deadline = Date.now() + 90_000;
    for (;;) {
      const n = await core.readNode({ name: nodeName }).catch(() => undefined);
      if (n?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) break;
      if (!node.kubelet.isRunning())
        throw new Error(`kubelet exited before its node was Ready:\n${node.kubelet.logTail(40)}`);
      if (Date.now() > deadline)
        throw new Error(`node ${nodeName} not Ready after 90 s:\n${node.kubelet.logTail(40)}`);
      await sleep(200);
    }
    // No node lifecycle controller: the not-ready taint kubelet registered with stays; drop it.
    const ready = await core.readNode({ name: nodeName });
    if (ready.spec?.taints?.length) {
      ready.spec.taints = [];
      await core.replaceNode({ name: nodeName, body: ready });
    }
    timings.nodeReady = performance.now() - t;
    log(`node ${nodeName} Ready on ${network.hostIp} (${network.subnet})`);
    return {
      cluster,
      nodeName,
      network,
      containerd,
      node,
      services,
      importedLater: deferred,
      images: built,
      timings,
      dir,
      stop,
    };
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
}
