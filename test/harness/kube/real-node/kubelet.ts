// kubelet (built by scripts/lib/kubelet-tools.mjs at the API server's version) registered as a
// node of the test cluster, with kube-scheduler and, when asked, kube-controller-manager beside
// it. Settings that matter on these machines: failCgroupV1 false (cgroup v1 hybrid host, kubelet
// ≥ 1.35 refuses it otherwise), the cgroupfs driver under a cgroup root of the node's own, the
// kubelet server only on the Pod bridge's host address, every directory under the node's temp dir.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Reaper } from '../../../../packages/embedded/src/index.js';
import { freeLoopbackPort, spawnClusterProcess, type ClusterProcess } from '../processes.js';
import { writeKubeconfigFile } from '../kubeconfig.js';

export interface NodeProcesses {
  kubelet: ClusterProcess;
  scheduler: ClusterProcess;
  controllerManager?: ClusterProcess;
  nodeName: string;
}

export interface StartKubeletOptions {
  dir: string;
  bins: { kubelet: string; 'kube-scheduler': string; 'kube-controller-manager': string };
  server: string;
  token: string;
  caPem: string;
  clientCaFile: string;
  containerdSocket: string;
  hostIp: string;
  cgroupRoot: string;
  nodeName: string;
  reaper: Reaper;
  /** Also run kube-controller-manager (Deployments, Jobs, namespace deletion, SA tokens). */
  withControllers?: { serviceAccountKeyFile: string };
  /** The cluster DNS Pods get as their nameserver (dns.ts), when the node runs Services. */
  clusterDns?: { address: string; domain: string };
}

export async function startNodeProcesses(options: StartKubeletOptions): Promise<NodeProcesses> {
  const { dir } = options;
  mkdirSync(dir, { recursive: true });
  const kubeconfig = join(dir, 'kubeconfig');
  writeKubeconfigFile(kubeconfig, options.server, options.token, options.caPem);
  const port = await freeLoopbackPort();
  const config = {
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    failCgroupV1: false,
    cgroupDriver: 'cgroupfs',
    cgroupRoot: `/${options.cgroupRoot}`,
    containerRuntimeEndpoint: `unix://${options.containerdSocket}`,
    address: options.hostIp,
    port,
    readOnlyPort: 0,
    healthzPort: 0,
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: false },
      x509: { clientCAFile: options.clientCaFile },
    },
    // Only the API server holds a certificate of this node's CA.
    authorization: { mode: 'AlwaysAllow' },
    podLogsDir: join(dir, 'pod-logs'),
    volumePluginDir: join(dir, 'volume-plugins'),
    // Pods get no resolver of this machine's (no route out); only the cluster DNS, if any.
    resolvConf: '',
    ...(options.clusterDns
      ? { clusterDNS: [options.clusterDns.address], clusterDomain: options.clusterDns.domain }
      : {}),
    serializeImagePulls: false,
    // The images are imported, never pulled: keep them however full the disk gets.
    imageGCHighThresholdPercent: 100,
    evictionHard: {
      'memory.available': '100Mi',
      'nodefs.available': '1%',
      'imagefs.available': '1%',
    },
    failSwapOn: false,
    syncFrequency: '10s',
    nodeStatusUpdateFrequency: '2s',
    shutdownGracePeriod: '0s',
    registerNode: true,
  };
  const configFile = join(dir, 'kubelet-config.json');
  writeFileSync(configFile, JSON.stringify(config, null, 2));
  const kubelet = spawnClusterProcess(
    'kubelet',
    options.bins.kubelet,
    [
      `--config=${configFile}`,
      `--kubeconfig=${kubeconfig}`,
      `--root-dir=${join(dir, 'root')}`,
      `--cert-dir=${join(dir, 'certs')}`,
      `--hostname-override=${options.nodeName}`,
      `--node-ip=${options.hostIp}`,
      '--v=1',
    ],
    { logFile: join(dir, 'kubelet.log'), cwd: dir, reaper: options.reaper },
  );
  const scheduler = spawnClusterProcess(
    'kube-scheduler',
    options.bins['kube-scheduler'],
    [
      `--kubeconfig=${kubeconfig}`,
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      '--secure-port=0',
    ],
    { logFile: join(dir, 'kube-scheduler.log'), cwd: dir, reaper: options.reaper },
  );
  let controllerManager: ClusterProcess | undefined;
  if (options.withControllers) {
    controllerManager = spawnClusterProcess(
      'kube-controller-manager',
      options.bins['kube-controller-manager'],
      [
        `--kubeconfig=${kubeconfig}`,
        '--leader-elect=false',
        '--bind-address=127.0.0.1',
        '--secure-port=0',
        `--service-account-private-key-file=${options.withControllers.serviceAccountKeyFile}`,
        '--use-service-account-credentials=false',
        '--controllers=*,-nodeipam,-nodelifecycle,-cloud-node-lifecycle,-service-lb-controller,-route',
        `--flex-volume-plugin-dir=${join(dir, 'kcm-volume-plugins')}`,
      ],
      { logFile: join(dir, 'kube-controller-manager.log'), cwd: dir, reaper: options.reaper },
    );
  }
  return { kubelet, scheduler, controllerManager, nodeName: options.nodeName };
}
