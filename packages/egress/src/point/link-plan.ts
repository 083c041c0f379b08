/**
 * The addresses and names of one sandbox's link to the egress point, as pure functions: which
 * /30 of the link range an index gets, what the network namespace and host-side interface are
 * called, and how Cubicle recognises its own among everything else on the machine.
 */

/**
 * LINK_RANGE is where sandbox links take their /30s: a /16 of 10.0.0.0/8 that home routers,
 * Docker (172.17/16), Kubernetes' usual Pod and Service ranges (10.96/12, 10.244/16) and
 * Tailscale (100.64/10) leave alone. It is never routed off the machine (no forwarding, see
 * nft-ruleset.ts); `checkRangeFree` (sandbox-link.ts) refuses to start when a route on this
 * machine overlaps it, and CUBICLE_EGRESS_LINK_RANGE chooses another.
 */
export const DEFAULT_LINK_RANGE = '10.217.0.0/16';

/** Host-side interface names start with this (15 characters at most in all). */
export const LINK_PREFIX = 'cbe';
/** Network namespace names (files in /run/netns) start with this. */
export const NETNS_PREFIX = 'cubicle-egress-';
/** The egress point's TCP listener port on every link's host address. */
export const INTERCEPT_PORT = 15001;
/** DNS is served on port 53 of the host address (what resolv.conf can name: it has no port). */
export const DNS_PORT = 53;

export interface LinkRange {
  base: number;
  prefix: number;
}

export interface LinkPlan {
  index: number;
  /** e.g. cubicle-egress-7-<desktop id>. */
  netns: string;
  /** The host end of the veth pair, e.g. cbe7. */
  hostIf: string;
  /** The sandbox end, inside its namespace. */
  sandboxIf: 'eth0';
  /** The egress point's address on this link (the sandbox's gateway and DNS server). */
  hostAddress: string;
  sandboxAddress: string;
  prefixLength: 30;
}

const toText = (n: number) => [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.');

export function parseIpv4(text: string): number | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let n = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part) || Number(part) > 255) return null;
    n = n * 256 + Number(part);
  }
  return n;
}

/** parseLinkRange reads `a.b.c.d/len` (len 8-28, aligned); throws on anything else. */
export function parseLinkRange(cidr: string): LinkRange {
  const [address, length] = cidr.split('/');
  const base = parseIpv4(address ?? '');
  const prefix = Number(length);
  if (base === null || !Number.isInteger(prefix) || prefix < 8 || prefix > 28)
    throw new Error(`egress link range ${cidr}: expected an IPv4 CIDR between /8 and /28`);
  if (base % 2 ** (32 - prefix) !== 0)
    throw new Error(`egress link range ${cidr}: the address is not the start of the range`);
  return { base, prefix };
}

/** linkCount is how many /30 links a range holds. */
export const linkCount = (range: LinkRange) => 2 ** (30 - range.prefix);

/**
 * planLink names and numbers link `index` of `range` for desktop `desktopId`. The desktop id is
 * part of the namespace's name so a sweep knows whose it is without any state file.
 */
export function planLink(range: LinkRange, index: number, desktopId: string): LinkPlan {
  if (!Number.isInteger(index) || index < 0 || index >= linkCount(range))
    throw new Error(`egress link index ${index} is outside the range`);
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(desktopId)) throw new Error('bad desktop id');
  const network = range.base + index * 4;
  return {
    index,
    netns: `${NETNS_PREFIX}${index}-${desktopId}`,
    hostIf: `${LINK_PREFIX}${index}`,
    sandboxIf: 'eth0',
    hostAddress: toText(network + 1),
    sandboxAddress: toText(network + 2),
    prefixLength: 30,
  };
}

/** parseNetnsName reads back what planLink put in a namespace name; null: not one of ours. */
export function parseNetnsName(name: string): { index: number; desktopId: string } | null {
  const match = /^cubicle-egress-(\d{1,7})-([A-Za-z0-9_-]{1,200})$/.exec(name);
  return match ? { index: Number(match[1]), desktopId: match[2]! } : null;
}

/** resolvConf is the sandbox's /etc/resolv.conf: Cubicle's resolver on its link, nothing else. */
export const resolvConf = (plan: LinkPlan) =>
  `# Cubicle's egress resolver (every answer passes the sandbox's egress policy)\n` +
  `nameserver ${plan.hostAddress}\noptions timeout:2 attempts:2\n`;
