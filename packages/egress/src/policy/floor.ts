import { cidrContains, parseCidr, type AddressBytes, type Cidr } from './address.js';

/**
 * FloorKind names why an address is closed to every sandbox whatever its policy. Each becomes
 * the rule of a decision: `operator:private-ranges`, `operator:metadata`, …
 */
export type FloorKind =
  | 'loopback'
  | 'unspecified'
  | 'private-ranges'
  | 'link-local'
  | 'metadata'
  | 'multicast'
  | 'reserved'
  | 'ipv4-embedded'
  | 'host-addresses';

/**
 * ABSOLUTE kinds stay closed even inside an operator range: the host's loopback is the egress
 * point's own machine (its Redis, its API), and an unspecified address means "this host".
 */
const ABSOLUTE: ReadonlySet<FloorKind> = new Set(['loopback', 'unspecified']);

const cidr = (text: string): Cidr => parseCidr(text)!;

// Metadata comes before link-local so 169.254.169.254 is named for what it is.
const RANGES: readonly (readonly [FloorKind, Cidr])[] = (
  [
    ['unspecified', '0.0.0.0/8'],
    ['loopback', '127.0.0.0/8'],
    ['private-ranges', '10.0.0.0/8'],
    ['private-ranges', '172.16.0.0/12'],
    ['private-ranges', '192.168.0.0/16'],
    // Carrier-grade NAT (RFC 6598): where clusters often put Pods or Services.
    ['private-ranges', '100.64.0.0/10'],
    ['metadata', '169.254.169.254/32'],
    // Alibaba Cloud's metadata address sits outside link-local.
    ['metadata', '100.100.100.200/32'],
    ['link-local', '169.254.0.0/16'],
    ['multicast', '224.0.0.0/4'],
    // Class E and the limited broadcast address.
    ['reserved', '240.0.0.0/4'],
    // The 6to4 relay anycast: a relay delivers into whatever IPv4 the packet carries.
    ['ipv4-embedded', '192.88.99.0/24'],
    ['unspecified', '::/128'],
    ['loopback', '::1/128'],
    // AWS's IPv6 metadata endpoint lies inside the unique-local block.
    ['metadata', 'fd00:ec2::254/128'],
    ['private-ranges', 'fc00::/7'],
    ['private-ranges', 'fec0::/10'],
    ['link-local', 'fe80::/10'],
    ['multicast', 'ff00::/8'],
  ] as const
).map(([kind, text]) => [kind, cidr(text)] as const);

/**
 * IPv6 prefixes carrying an IPv4 address that a translator or relay on the path would deliver
 * to. `at` is the IPv4 address's byte offset when it sits at a fixed place: the embedded address
 * is then judged like any IPv4 one; elsewhere the whole prefix is closed (a public IPv4 is
 * reachable by its own literal, so nothing is lost).
 */
const EMBEDDING: readonly { prefix: Cidr; at: number | null }[] = [
  { prefix: cidr('::/96'), at: 12 },
  { prefix: cidr('::ffff:0:0:0/96'), at: 12 },
  { prefix: cidr('64:ff9b::/96'), at: 12 },
  { prefix: cidr('64:ff9b:1::/48'), at: null },
  { prefix: cidr('2001::/32'), at: null },
  { prefix: cidr('2002::/16'), at: 2 },
];

/** The operator's side of the floor: ranges opened in it and the installation's own addresses. */
export interface Floor {
  /** CIDRs the operator opened (installation config). */
  operatorAllow: readonly Cidr[];
  /** The control plane's and nodes' addresses, closed like private ranges. */
  hostAddresses: readonly Cidr[];
}

function builtinKind(address: AddressBytes): FloorKind | null {
  if (address.length === 16) {
    for (const { prefix, at } of EMBEDDING) {
      if (!cidrContains(prefix, address)) continue;
      // `::` and `::1` sit inside ::/96 but are their own kinds.
      const own = RANGES.find(([, range]) => range.bits === 128 && cidrContains(range, address));
      if (own) return own[0];
      return at === null
        ? 'ipv4-embedded'
        : (builtinKind(address.slice(at, at + 4)) ?? 'ipv4-embedded');
    }
  }
  return RANGES.find(([, range]) => cidrContains(range, address))?.[0] ?? null;
}

/**
 * floorKind says why an address is closed to sandboxes, or null when policy may decide. The
 * operator's ranges open what they contain, except loopback and unspecified addresses. An IPv4
 * address spelled in IPv6 (NAT64, 6to4) is classed by the IPv4 it carries but opened only by an
 * operator range holding the IPv6 spelling itself (mapped `::ffff:a.b.c.d` is plain IPv4 here).
 */
export function floorKind(address: AddressBytes, floor: Floor): FloorKind | null {
  const kind: FloorKind | null = floor.hostAddresses.some((c) => cidrContains(c, address))
    ? 'host-addresses'
    : builtinKind(address);
  if (kind === null || ABSOLUTE.has(kind)) return kind;
  if (floor.operatorAllow.some((c) => cidrContains(c, address))) return null;
  return kind;
}
