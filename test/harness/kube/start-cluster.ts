// A private Kubernetes control plane for tests: etcd + kube-apiserver (real binaries built by
// scripts/lib/kube-tools.mjs) on free loopback ports, with their data in a temp dir. There is no
// kubelet or scheduler; startNodeAgent (node-agent.ts) stands in for the node.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { startReaper } from '../../../packages/embedded/src/index.js';
import { kubeToolPaths } from '../../../scripts/lib/kube-paths.mjs';
import { getInsecure, makeKubeConfig, writeKubeconfigFile } from './kubeconfig.js';
import { installKubevirtCrds } from './kubevirt-crds.js';
import {
  freeLoopbackPort,
  spawnClusterProcess,
  waitUntil,
  type ClusterProcess,
} from './processes.js';

export interface KubeCluster {
  /** https://127.0.0.1:<port> (the podReachable address instead, when given) */
  readonly server: string;
  /** Bearer token of a cluster admin (group system:masters). */
  readonly token: string;
  /** A kubeconfig file for this cluster (current context = admin). */
  readonly kubeconfigPath: string;
  /** The same for @kubernetes/client-node: `kubeconfig.makeApiClient(CoreV1Api)`. */
  readonly kubeconfig: KubeConfig;
  /** The API server's version, e.g. v1.36.5. */
  readonly version: string;
  /** Temp dir holding data, certificates and logs (removed by stop()). */
  readonly dir: string;
  /** createNamespace creates a fresh namespace `<prefix><random>` and returns its name. */
  createNamespace(prefix?: string): Promise<string>;
  /** restartApiServer stops kube-apiserver and starts it again on the same port; etcd keeps the data. */
  restartApiServer(): Promise<void>;
  /** stop ends kube-apiserver and etcd and removes the temp dir; idempotent. */
  stop(): Promise<void>;
}

export interface StartKubeClusterOptions {
  /** Install the minimal KubeVirt CRDs (default true). */
  withKubevirt?: boolean;
  log?: (line: string) => void;
  /** More kube-apiserver flags (the real node's kubelet client certificate, real-node/). */
  apiserverArgs?: string[];
  /**
   * The real node running the chart (real-node/): the API server listens on this address (the
   * Pod bridge's host side, so Pods reach it) instead of 127.0.0.1, with this Service range, the
   * ServiceAccount admission plugin (Pods get tokens) and the `kubernetes` Service's endpoints.
   */
  podReachable?: { address: string; serviceCidr: string };
}

function requireBinary(path: string, name: string, version: string): string {
  if (existsSync(path)) return path;
  throw new Error(
    `${name} ${version} is not built: ${path} is missing. \`npm test\` builds it during its ` +
      'bootstrap; to build it alone run `node scripts/lib/kube-tools.mjs` (the first build takes minutes).',
  );
}

/**
 * startKubeCluster starts etcd, then kube-apiserver against it, waits for /readyz, writes a
 * kubeconfig and installs the KubeVirt CRDs. On failure everything started is stopped.
 */
export async function startKubeCluster(
  options: StartKubeClusterOptions = {},
): Promise<KubeCluster> {
  const log = options.log ?? (() => {});
  const tools = kubeToolPaths();
  const etcdBin = requireBinary(tools.etcd, 'etcd', tools.versions.etcd);
  const apiserverBin = requireBinary(
    tools.kubeApiserver,
    'kube-apiserver',
    tools.versions.kubeApiserver,
  );

  const dir = mkdtempSync(join(tmpdir(), 'cubicle-kube-'));
  const reaper = startReaper();
  reaper.removeOnExit(dir);
  let etcd: ClusterProcess | undefined;
  let apiserver: ClusterProcess | undefined;
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      // Reverse order of start-up; both are attempted even if one fails.
      const results = await Promise.allSettled([apiserver?.stop()]);
      results.push(...(await Promise.allSettled([etcd?.stop()])));
      rmSync(dir, { recursive: true, force: true });
      reaper.close();
      for (const result of results) if (result.status === 'rejected') throw result.reason;
    })());

  try {
    const [etcdPort, peerPort, apiPort] = await Promise.all([
      freeLoopbackPort(),
      freeLoopbackPort(),
      freeLoopbackPort(),
    ]);
    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    const peerUrl = `http://127.0.0.1:${peerPort}`;
    etcd = spawnClusterProcess(
      'etcd',
      etcdBin,
      [
        '--name=default',
        `--data-dir=${join(dir, 'etcd')}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=${peerUrl}`,
        `--initial-advertise-peer-urls=${peerUrl}`,
        `--initial-cluster=default=${peerUrl}`,
        // Tests throw their data away: no fsync, no metrics listener, quiet logs.
        '--unsafe-no-fsync',
        '--log-level=warn',
      ],
      { logFile: join(dir, 'etcd.log'), cwd: dir, reaper },
    );
    await waitUntil(
      etcd,
      'etcd /health',
      async () => (await fetch(`${etcdUrl}/health`)).ok,
      30_000,
    );
    log(`etcd ${tools.versions.etcd} ready on ${etcdUrl}`);

    const token = randomBytes(24).toString('hex');
    const certDir = join(dir, 'certs');
    mkdirSync(certDir, { mode: 0o700 });
    const { privateKey } = generateKeyPairSync('ec', {
      namedCurve: 'P-256',
      privateKeyEncoding: { type: 'sec1', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    const saKey = join(certDir, 'service-account.key');
    writeFileSync(saKey, privateKey, { mode: 0o600 });
    const tokensCsv = join(certDir, 'tokens.csv');
    writeFileSync(tokensCsv, `${token},admin,admin,"system:masters"\n`, { mode: 0o600 });
    const reachable = options.podReachable;
    const address = reachable?.address ?? '127.0.0.1';
    const server = `https://${address}:${apiPort}`;
    const apiserverArgs = [
      `--etcd-servers=${etcdUrl}`,
      `--bind-address=${address}`,
      `--secure-port=${apiPort}`,
      `--advertise-address=${address}`,
      `--cert-dir=${certDir}`,
      `--service-account-issuer=${server}`,
      `--service-account-key-file=${saKey}`,
      `--service-account-signing-key-file=${saKey}`,
      `--service-cluster-ip-range=${reachable?.serviceCidr ?? '10.0.0.0/24'}`,
      '--authorization-mode=RBAC',
      `--token-auth-file=${tokensCsv}`,
      // No controller manager creates default service accounts, so pods must not require one.
      ...(reachable ? [] : ['--disable-admission-plugins=ServiceAccount']),
      '--allow-privileged=true',
      '--profiling=false',
      // The `kubernetes` Service cannot point at a loopback address; nothing here needs it.
      ...(reachable ? [] : ['--endpoint-reconciler-type=none']),
      // On SIGTERM, close open watches at once instead of waiting for them to drain.
      '--shutdown-watch-termination-grace-period=1s',
      ...(options.apiserverArgs ?? []),
    ];
    const startApiserver = async () => {
      const proc = spawnClusterProcess('kube-apiserver', apiserverBin, apiserverArgs, {
        logFile: join(dir, 'kube-apiserver.log'),
        cwd: dir,
        reaper,
      });
      apiserver = proc;
      await waitUntil(
        proc,
        '/readyz',
        async () => (await getInsecure(`${server}/readyz`, token)).status === 200,
        90_000,
      );
    };
    await startApiserver();
    // The API server wrote a self-signed serving certificate (and its CA) into --cert-dir.
    const caPem = readFileSync(join(certDir, 'apiserver.crt'), 'utf8');
    const kubeconfig = makeKubeConfig(server, token, caPem);
    const kubeconfigPath = join(dir, 'kubeconfig');
    writeKubeconfigFile(kubeconfigPath, server, token, caPem);
    const version = JSON.parse((await getInsecure(`${server}/version`, token)).body) as {
      gitVersion: string;
    };
    log(`kube-apiserver ${version.gitVersion} ready on ${server}`);
    if (options.withKubevirt ?? true) await installKubevirtCrds(kubeconfig);

    const core = kubeconfig.makeApiClient(CoreV1Api);
    return {
      server,
      token,
      kubeconfigPath,
      kubeconfig,
      version: version.gitVersion,
      dir,
      createNamespace: async (prefix = 'cubicle-t-') => {
        const name = `${prefix}${randomBytes(4).toString('hex')}`;
        await core.createNamespace({ body: { metadata: { name } } });
        return name;
      },
      restartApiServer: async () => {
        await apiserver?.stop();
        await startApiserver();
        log('kube-apiserver restarted');
      },
      stop,
    };
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
}
