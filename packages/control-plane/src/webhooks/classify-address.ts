import { addressBytes } from '@cubicle/egress';

/** Why an address is not a webhook destination; null when it is a public unicast address. */
export type RefusedAddressKind =
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'shared'
  | 'link_local'
  | 'unique_local'
  | 'multicast'
  | 'reserved'
  /** IPv4 carried inside IPv6 (translation or tunnelling) whose IPv4 is not itself refused. */
  | 'ipv4_embedded';

type Range = readonly [kind: RefusedAddressKind, cidr: string];

const V4_RANGES: readonly Range[] = [
  ['unspecified', '0.0.0.0/8'],
  ['private', '10.0.0.0/8'],
  ['shared', '100.64.0.0/10'],
  ['loopback', '127.0.0.0/8'],
  // Includes the cloud metadata address 169.254.169.254.
  ['link_local', '169.254.0.0/16'],
  ['private', '172.16.0.0/12'],
  ['reserved', '192.0.0.0/24'],
  ['reserved', '192.0.2.0/24'],
  // The 6to4 relay anycast prefix (deprecated): a relay forwards into embedded IPv4 space.
  ['reserved', '192.88.99.0/24'],
  ['private', '192.168.0.0/16'],
  ['reserved', '198.18.0.0/15'],
  ['reserved', '198.51.100.0/24'],
  ['reserved', '203.0.113.0/24'],
  ['multicast', '224.0.0.0/4'],
  ['reserved', '240.0.0.0/4'],
];

/**
 * IPv6 prefixes that carry an IPv4 address: whatever translates or tunnels them (a NAT64
 * gateway in the cluster, a 6to4 or Teredo relay, the kernel for mapped addresses) delivers to
 * IPv4 space the guard cannot see from here, so each is refused whole. `at` is the byte offset
 * of the IPv4 address when it sits at a fixed place (it then names the refusal's kind).
 */
const V6_EMBEDDING: readonly { cidr: string; at: number | null }[] = [
  // IPv4-compatible (deprecated, ::a.b.c.d) — `::` and `::1` are classified before this.
  { cidr: '::/96', at: 12 },
  // IPv4-mapped (::ffff:a.b.c.d): the kernel connects to the IPv4 address itself.
  { cidr: '::ffff:0:0/96', at: 12 },
  // SIIT IPv4-translated (::ffff:0:a.b.c.d, RFC 2765).
  { cidr: '::ffff:0:0:0/96', at: 12 },
  // Well-known NAT64 prefix (RFC 6052).
  { cidr: '64:ff9b::/96', at: 12 },
  // Local-use NAT64 (RFC 8215): operators choose the prefix length inside it, so where the
  // IPv4 address sits is not known.
  { cidr: '64:ff9b:1::/48', at: null },
  // Teredo (RFC 4380): server IPv4 in clear, client IPv4 obfuscated.
  { cidr: '2001::/32', at: null },
  // 6to4 (RFC 3056): 2002:AABB:CCDD::/48 carries AA.BB.CC.DD.
  { cidr: '2002::/16', at: 2 },
];

const V6_RANGES: readonly Range[] = [
  ['reserved', '100::/64'],
  // Benchmarking, ORCHID and ORCHIDv2 (inside the IETF protocol assignments 2001::/23).
  ['reserved', '2001:2::/48'],
  ['reserved', '2001:10::/28'],
  ['reserved', '2001:20::/28'],
  ['reserved', '2001:db8::/32'],
  ['reserved', '3fff::/20'],
  ['reserved', '5f00::/16'],
  ['unique_local', 'fc00::/7'],
  ['link_local', 'fe80::/10'],
  ['unique_local', 'fec0::/10'],
  ['multicast', 'ff00::/8'],
];

/** The 4 or 16 bytes of an IP literal as written (mapped IPv6 stays 16 bytes: classified below). */
function bytesOf(address: string): Uint8Array {
  const bytes = addressBytes(address);
  if (!bytes) throw new Error(`${address} is not an IP address`);
  return bytes;
}

interface Prefix {
  bytes: Uint8Array;
  bits: number;
}

const prefixOf = (cidr: string): Prefix => {
  const [network, bits] = cidr.split('/') as [string, string];
  return { bytes: bytesOf(network), bits: Number(bits) };
};

function within(bytes: Uint8Array, prefix: Prefix): boolean {
  if (bytes.length !== prefix.bytes.length) return false;
  const whole = prefix.bits >> 3;
  for (let i = 0; i < whole; i += 1) if (bytes[i] !== prefix.bytes[i]) return false;
  const rest = prefix.bits & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return ((bytes[whole] ?? 0) & mask) === ((prefix.bytes[whole] ?? 0) & mask);
}

const v4Ranges = V4_RANGES.map(([kind, cidr]) => ({ kind, prefix: prefixOf(cidr) }));
const v6Ranges = V6_RANGES.map(([kind, cidr]) => ({ kind, prefix: prefixOf(cidr) }));
const v6Embedding = V6_EMBEDDING.map(({ cidr, at }) => ({ prefix: prefixOf(cidr), at }));
const LOOPBACK_V6 = bytesOf('::1');
const UNSPECIFIED_V6 = bytesOf('::');

const equal = (a: Uint8Array, b: Uint8Array) => a.every((byte, i) => byte === b[i]);

function classifyV4(bytes: Uint8Array): RefusedAddressKind | null {
  return v4Ranges.find((r) => within(bytes, r.prefix))?.kind ?? null;
}

/**
 * classifyAddress says why an IP address may not receive webhooks (loopback, private, shared,
 * link-local incl. 169.254.169.254, unique-local IPv6, unspecified, multicast, reserved), or
 * null for a public address. Every IPv6 form that carries an IPv4 address — mapped, compatible,
 * SIIT, NAT64 (well-known and local-use), 6to4, Teredo — is refused whatever that IPv4 is (the
 * kind names the embedded address's class when it sits at a known place and is itself refused,
 * else `ipv4_embedded`): a public IPv4 is reachable by its own literal, so nothing is lost.
 */
export function classifyAddress(address: string): RefusedAddressKind | null {
  const bytes = bytesOf(address);
  if (bytes.length === 4) return classifyV4(bytes);
  if (equal(bytes, UNSPECIFIED_V6)) return 'unspecified';
  if (equal(bytes, LOOPBACK_V6)) return 'loopback';
  for (const { prefix, at } of v6Embedding) {
    if (!within(bytes, prefix)) continue;
    const v4 = at === null ? null : classifyV4(bytes.subarray(at, at + 4));
    return v4 ?? 'ipv4_embedded';
  }
  return v6Ranges.find((r) => within(bytes, r.prefix))?.kind ?? null;
}
