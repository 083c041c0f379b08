import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/** Why an address is not a webhook destination; null when it is a public unicast address. */
export type RefusedAddressKind =
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'shared'
  | 'link_local'
  | 'unique_local'
  | 'multicast'
  | 'reserved';

const ranges: [RefusedAddressKind, string, number, 'ipv4' | 'ipv6'][] = [
  ['unspecified', '0.0.0.0', 8, 'ipv4'],
  ['private', '10.0.0.0', 8, 'ipv4'],
  ['shared', '100.64.0.0', 10, 'ipv4'],
  ['loopback', '127.0.0.0', 8, 'ipv4'],
  // Includes the cloud metadata address 169.254.169.254.
  ['link_local', '169.254.0.0', 16, 'ipv4'],
  ['private', '172.16.0.0', 12, 'ipv4'],
  ['reserved', '192.0.0.0', 24, 'ipv4'],
  ['reserved', '192.0.2.0', 24, 'ipv4'],
  ['private', '192.168.0.0', 16, 'ipv4'],
  ['reserved', '198.18.0.0', 15, 'ipv4'],
  ['reserved', '198.51.100.0', 24, 'ipv4'],
  ['reserved', '203.0.113.0', 24, 'ipv4'],
  ['multicast', '224.0.0.0', 4, 'ipv4'],
  ['reserved', '240.0.0.0', 4, 'ipv4'],
  ['unspecified', '::', 128, 'ipv6'],
  ['loopback', '::1', 128, 'ipv6'],
  ['reserved', '64:ff9b::', 96, 'ipv6'],
  ['reserved', '100::', 64, 'ipv6'],
  ['reserved', '2001:db8::', 32, 'ipv6'],
  ['unique_local', 'fc00::', 7, 'ipv6'],
  ['link_local', 'fe80::', 10, 'ipv6'],
  ['unique_local', 'fec0::', 10, 'ipv6'],
  ['multicast', 'ff00::', 8, 'ipv6'],
];
const lists = ranges.map(([kind, network, prefix, family]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return { kind, list, family };
});

/** embeddedIpv4 returns the IPv4 address inside an IPv4-mapped or -compatible IPv6 address. */
function embeddedIpv4(address: string): string | null {
  const match = /^::(?:ffff:)?(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(
    address,
  );
  if (!match) return null;
  if (match[1]) return match[1];
  const hi = parseInt(match[2]!, 16);
  const lo = parseInt(match[3]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/**
 * classifyAddress says why an IP address may not receive webhooks (loopback, private,
 * link-local incl. 169.254.169.254, unique-local IPv6, unspecified, multicast, reserved), or
 * null for a public address. IPv4-mapped IPv6 addresses are judged by their IPv4 address.
 */
export function classifyAddress(address: string): RefusedAddressKind | null {
  const family = isIP(address);
  if (family === 0) throw new Error(`${address} is not an IP address`);
  if (family === 6) {
    const v4 = embeddedIpv4(address);
    if (v4 && address !== '::' && address !== '::1') return classifyAddress(v4);
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const { kind, list, family: f } of lists)
    if (f === type && list.check(address, type)) return kind;
  return null;
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** AddressRefusal is what a refused host resolved to and why; it becomes `webhook_url_refused`. */
export class AddressRefusal extends Error {
  constructor(
    readonly host: string,
    readonly address: string | null,
    readonly kind: RefusedAddressKind | 'unresolvable',
  ) {
    super(
      address
        ? `${host} resolves to ${address} (${kind.replace('_', '-')}), which is not allowed`
        : `${host} does not resolve`,
    );
    this.name = 'AddressRefusal';
  }
}

/** A name that does not resolve within this long counts as unresolvable. */
const LOOKUP_TIMEOUT_MS = 5000;

/** hostOf strips the brackets URL puts around IPv6 literals. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/**
 * resolveDeliverable resolves a host and returns the address to connect to. Every address the
 * name resolves to must be allowed (a name with one private address is refused whole, so a
 * rebinding name cannot pass by its public half); with `allowPrivate` any address is accepted.
 * Throws AddressRefusal.
 */
export async function resolveDeliverable(
  host: string,
  allowPrivate: boolean,
): Promise<ResolvedAddress> {
  const literal = isIP(host);
  let addresses: ResolvedAddress[];
  if (literal !== 0) addresses = [{ address: host, family: literal as 4 | 6 }];
  else {
    let timer: NodeJS.Timeout | undefined;
    try {
      // getaddrinfo cannot be cancelled; a resolver that hangs only loses the race.
      addresses = (await Promise.race([
        lookup(host, { all: true, verbatim: true }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('timeout')), LOOKUP_TIMEOUT_MS);
        }),
      ])) as ResolvedAddress[];
    } catch {
      throw new AddressRefusal(host, null, 'unresolvable');
    } finally {
      clearTimeout(timer);
    }
    if (addresses.length === 0) throw new AddressRefusal(host, null, 'unresolvable');
  }
  if (!allowPrivate)
    for (const a of addresses) {
      const kind = classifyAddress(a.address);
      if (kind) throw new AddressRefusal(host, a.address, kind);
    }
  return addresses[0]!;
}
