// The real node's Pod network: a Linux bridge of the node's own (crn-<id>) holding 198.18.N.1/24,
// one /24 of 198.18.0.0/15 (RFC 2544: reserved for benchmarking, never routed on the internet),
// and the CNI `bridge` plugin with `host-local` IPAM, run by containerd for each Pod's network
// namespace. isGateway and ipMasq are off: Pods get an address on the bridge and no default
// route, ip_forward stays as it is and no iptables/nftables rule is written, so nothing a Pod
// sends can leave this machine; the host (kubelet's probes, the worker, the tests) reaches Pod
// IPs over the bridge.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sh } from './host.js';

export interface PodNetwork {
  bridge: string;
  /** 198.18.N.0/24 */
  subnet: string;
  /** 198.18.N.1: the host's address on the bridge (node IP, kubelet's listen address). */
  hostIp: string;
  /** CNI network name (also the prefix of libcni's cached results). */
  name: string;
  confDir: string;
  /**
   * 198.19.N.0/24: the Service range of a node that runs Services (the other half of the
   * benchmarking /15). Pods route it to the host (kube-proxy's rules are there); nothing else.
   */
  serviceCidr: string;
}

/** freeThirdOctet picks N so that 198.18.N.0/24 is on no interface of this machine. */
async function freeThirdOctet(): Promise<number> {
  const used = new Set(
    [
      ...(await sh('ip', ['-4', '-o', 'addr', 'show'])).matchAll(/inet 198\.18\.(\d+)\./g),
      ...(await sh('ip', ['-4', 'route', 'show'])).matchAll(/^198\.19\.(\d+)\./gm),
    ].map((m) => Number(m[1])),
  );
  const start = 1 + (process.pid % 250);
  for (let i = 0; i < 250; i += 1) {
    const n = 1 + ((start + i) % 250);
    if (!used.has(n)) return n;
  }
  throw new Error('no free /24 left in 198.18.0.0/24…198.18.250.0/24');
}

/**
 * createPodNetwork makes the bridge (up, with the host address) and writes the CNI config into
 * `dir`. With `services`, Pods also get a route to the Service range through the host.
 */
export async function createPodNetwork(
  dir: string,
  id: string,
  { services = false }: { services?: boolean } = {},
): Promise<PodNetwork> {
  const n = await freeThirdOctet();
  const bridge = `crn-${id}`.slice(0, 15);
  const subnet = `198.18.${n}.0/24`;
  const hostIp = `198.18.${n}.1`;
  const serviceCidr = `198.19.${n}.0/24`;
  await sh('ip', ['link', 'add', bridge, 'type', 'bridge']);
  await sh('ip', ['addr', 'add', `${hostIp}/24`, 'dev', bridge]);
  await sh('ip', ['link', 'set', bridge, 'up']);
  const name = `cubicle-${id}`;
  const confDir = join(dir, 'cni', 'net.d');
  await sh('mkdir', ['-p', confDir]);
  const conflist = {
    cniVersion: '1.0.0',
    name,
    plugins: [
      {
        type: 'bridge',
        bridge,
        isGateway: false,
        ipMasq: false,
        hairpinMode: true,
        ipam: {
          type: 'host-local',
          ranges: [[{ subnet, rangeStart: `198.18.${n}.10`, rangeEnd: `198.18.${n}.250` }]],
          dataDir: join(dir, 'cni', 'ipam'),
          ...(services ? { routes: [{ dst: serviceCidr, gw: hostIp }] } : {}),
        },
      },
    ],
  };
  writeFileSync(join(confDir, '10-cubicle.conflist'), JSON.stringify(conflist, null, 2));
  return { bridge, subnet, hostIp, name, confDir, serviceCidr };
}

/** routesOf returns the routing table a Pod sees, from /proc/<pid>/net/route of a process in it. */
export function routesOf(pid: number): string[] {
  return readFileSync(`/proc/${pid}/net/route`, 'utf8').trim().split('\n').slice(1);
}

export async function deletePodNetwork(network: PodNetwork): Promise<void> {
  await sh('ip', ['link', 'delete', network.bridge]).catch(() => undefined);
}
