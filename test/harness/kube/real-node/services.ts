// Services on the real node: kube-proxy (built by scripts/lib/kubelet-tools.mjs at the API
// server's version) in iptables mode, so the chart's ClusterIP Services route, from the host and
// from Pods. What that takes on this host, and how it stays on this machine:
// - Pods route the Service range (198.19.N.0/24) to the host over the bridge (network.ts); the
//   host routes it onto the bridge too, so a Service IP nobody answers for never leaves.
// - Forwarding is switched on for the node's bridge only (net.ipv4.conf.<bridge>.forwarding;
//   ip_forward stays as it is), and a mangle FORWARD rule drops anything arriving from the bridge
//   that would leave by another interface (mangle runs before kube-proxy's filter rules).
// - masqueradeAll: every Service connection is SNATed to the bridge address, so replies come back
//   through the host's conntrack whatever the Pods' routes.
// stopServices runs `kube-proxy --cleanup` (its KUBE-* chains and jumps) and drops the guard rule;
// host.ts does the same for a node whose test process died.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Reaper } from '../../../../packages/embedded/src/index.js';
import { freeLoopbackPort, spawnClusterProcess, type ClusterProcess } from '../processes.js';
import { sh } from './host.js';
import type { PodNetwork } from './network.js';

/** PATH for kube-proxy: it runs iptables, iptables-save and iptables-restore (in /usr/sbin). */
const PROXY_PATH = 'PATH=/usr/sbin:/usr/bin:/sbin:/bin';

/** The guard rule's spec (after -A/-D): leaving the bridge for anywhere else is dropped. */
export function guardRule(bridge: string): string[] {
  return [
    'FORWARD',
    '-i',
    bridge,
    '!',
    '-o',
    bridge,
    '-m',
    'comment',
    '--comment',
    `cubicle real node ${bridge}: nothing leaves this machine`,
    '-j',
    'DROP',
  ];
}

/** openBridgeForServices: the guard, forwarding on the bridge only, the Service range onto the bridge. */
export async function openBridgeForServices(network: PodNetwork): Promise<void> {
  await sh('iptables', ['-w', '-t', 'mangle', '-I', ...guardRule(network.bridge)]);
  writeFileSync(`/proc/sys/net/ipv4/conf/${network.bridge}/forwarding`, '1');
  await sh('ip', [
    'route',
    'add',
    network.serviceCidr,
    'dev',
    network.bridge,
    'src',
    network.hostIp,
  ]);
}

/** closeBridge removes the guard rule (the route and the forwarding go with the bridge). */
export async function closeBridge(bridge: string): Promise<void> {
  for (let i = 0; i < 5; i += 1) {
    const deleted = await sh('iptables', ['-w', '-t', 'mangle', '-D', ...guardRule(bridge)])
      .then(() => true)
      .catch(() => false);
    if (!deleted) break;
  }
}

export function kubeProxyConfig(options: {
  kubeconfig: string;
  nodeName: string;
  network: PodNetwork;
  healthzPort: number;
  metricsPort: number;
}): object {
  const { network } = options;
  return {
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    clientConnection: { kubeconfig: options.kubeconfig },
    hostnameOverride: options.nodeName,
    bindAddress: network.hostIp,
    healthzBindAddress: `127.0.0.1:${options.healthzPort}`,
    metricsBindAddress: `127.0.0.1:${options.metricsPort}`,
    mode: 'iptables',
    clusterCIDR: network.subnet,
    // No NodePorts on loopback: route_localnet stays off.
    iptables: {
      masqueradeAll: true,
      localhostNodePorts: false,
      syncPeriod: '30s',
      minSyncPeriod: '0s',
    },
    // Root here lacks CAP_SYS_RESOURCE: kube-proxy's default -999 cannot be set.
    oomScoreAdj: 0,
    // Zero: leave the host's conntrack limits and timeouts as they are.
    conntrack: {
      maxPerCore: 0,
      min: 0,
      tcpEstablishedTimeout: '0s',
      tcpCloseWaitTimeout: '0s',
    },
    // NodePorts only on the bridge address (never on this machine's other interfaces).
    nodePortAddresses: [`${network.hostIp}/32`],
  };
}

export async function startKubeProxy(options: {
  bin: string;
  dir: string;
  kubeconfig: string;
  nodeName: string;
  network: PodNetwork;
  reaper: Reaper;
}): Promise<ClusterProcess> {
  const [healthzPort, metricsPort] = await Promise.all([freeLoopbackPort(), freeLoopbackPort()]);
  const config = join(options.dir, 'kube-proxy-config.json');
  writeFileSync(
    config,
    JSON.stringify(kubeProxyConfig({ ...options, healthzPort, metricsPort }), null, 2),
  );
  return spawnClusterProcess(
    'kube-proxy',
    '/usr/bin/env',
    [PROXY_PATH, options.bin, `--config=${config}`, '--v=1'],
    { logFile: join(options.dir, 'kube-proxy.log'), cwd: options.dir, reaper: options.reaper },
  );
}

/** What kube-proxy may leave that `--cleanup` does not remove, as found before the node started. */
export interface NetfilterBefore {
  /** `nft list tables` lines (iptables-nft makes its tables on first use). */
  tables: string[];
  /** Whether KUBE-FIREWALL existed (iptables, ip6tables). */
  kubeFirewall: { iptables: boolean; ip6tables: boolean };
}

const nftTables = async () =>
  (await sh('nft', ['list', 'tables']).catch(() => ''))
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);

const hasChain = (tool: string, chain: string) =>
  sh(tool, ['-w', '-t', 'filter', '-S', chain])
    .then(() => true)
    .catch(() => false);

export async function netfilterBefore(): Promise<NetfilterBefore> {
  return {
    tables: await nftTables(),
    kubeFirewall: {
      iptables: await hasChain('iptables', 'KUBE-FIREWALL'),
      ip6tables: await hasChain('ip6tables', 'KUBE-FIREWALL'),
    },
  };
}

/**
 * cleanupKubeProxy removes kube-proxy's chains and rules from the host (`kube-proxy --cleanup`),
 * then what that leaves and was not there before: the KUBE-FIREWALL chain kube-proxy makes in the
 * filter tables (with its jumps), and iptables-nft tables that are new and hold no rule.
 */
export async function cleanupKubeProxy(bin: string, before?: NetfilterBefore): Promise<void> {
  await sh('/usr/bin/env', [PROXY_PATH, bin, '--cleanup', '--v=0']).catch(() => undefined);
  if (!before) return;
  for (const tool of ['iptables', 'ip6tables'] as const) {
    if (before.kubeFirewall[tool]) continue;
    for (const hook of ['INPUT', 'OUTPUT', 'FORWARD'])
      while (
        await sh(tool, ['-w', '-D', hook, '-j', 'KUBE-FIREWALL'])
          .then(() => true)
          .catch(() => false)
      );
    await sh(tool, ['-w', '-F', 'KUBE-FIREWALL']).catch(() => undefined);
    await sh(tool, ['-w', '-X', 'KUBE-FIREWALL']).catch(() => undefined);
  }
  for (const line of await nftTables()) {
    if (before.tables.includes(line)) continue;
    const [, family, name] = line.split(/\s+/);
    if (!family || !name) continue;
    const listing = await sh('nft', ['list', 'table', family, name]).catch(() => '');
    // Base chains only, no rule in any: what iptables-nft made and kube-proxy's cleanup emptied.
    const rules = listing
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !/^(table|chain|type|policy|}|\{)/.test(l));
    if (rules.length === 0)
      await sh('nft', ['delete', 'table', family, name]).catch(() => undefined);
  }
}
