import { isIP } from 'node:net';

/** An IP address as its 4 or 16 bytes. */
export type AddressBytes = Uint8Array;

/** A CIDR block: its network bytes and prefix length. */
export interface Cidr {
  bytes: AddressBytes;
  bits: number;
}

/**
 * parseAddress returns the bytes of an IP literal, or null when it is not one. An IPv4-mapped
 * IPv6 address (`::ffff:10.0.0.1`) comes back as its IPv4 bytes: the kernel connects to that IPv4
 * address, so rules and ranges must see it as one. A zone index (`%eth0`) is dropped.
 */
export function parseAddress(address: string): AddressBytes | null {
  const bytes = addressBytes(address);
  return bytes && isMapped(bytes) ? bytes.slice(12) : bytes;
}

/**
 * addressBytes returns the 4 or 16 bytes of an IP literal exactly as written (a mapped IPv6
 * address stays 16 bytes), or null when it is not one. A zone index (`%eth0`) is dropped.
 */
export function addressBytes(address: string): AddressBytes | null {
  const bare = address.replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return Uint8Array.from(bare.split('.').map(Number));
  return family === 6 ? v6Bytes(bare.toLowerCase()) : null;
}

function v6Bytes(text: string): AddressBytes {
  let hex = text;
  // A dotted IPv4 tail stands for the last two groups.
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(hex);
  if (tail) {
    const [a, b, c, d] = tail.slice(1).map(Number) as [number, number, number, number];
    hex = `${hex.slice(0, tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', rest] = hex.split('::') as [string, string | undefined];
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const left = groups(head);
  const right = rest === undefined ? [] : groups(rest);
  const all = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  const bytes = new Uint8Array(16);
  all.forEach((group, i) => {
    const value = parseInt(group, 16);
    bytes[i * 2] = value >> 8;
    bytes[i * 2 + 1] = value & 255;
  });
  return bytes;
}

function isMapped(bytes: AddressBytes): boolean {
  for (let i = 0; i < 10; i += 1) if (bytes[i] !== 0) return false;
  return bytes[10] === 0xff && bytes[11] === 0xff;
}

/**
 * parseCidr reads `a.b.c.d/n`, `v6/n` or a bare address (a /32 or /128). Host bits set below
 * the prefix are cleared (`10.1.2.3/8` is `10.0.0.0/8`). A mapped IPv6 CIDR of /96 or longer is
 * read as the IPv4 block it maps; null when the text is not a CIDR.
 */
export function parseCidr(text: string): Cidr | null {
  const [address = '', bitsText, extra] = text.split('/');
  if (extra !== undefined) return null;
  const bare = address.replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 0) return null;
  const raw = family === 4 ? parseAddress(bare)! : v6Bytes(bare.toLowerCase());
  const max = raw.length * 8;
  const bits = bitsText === undefined ? max : Number(bitsText);
  if (!/^\d{1,3}$/.test(bitsText ?? '0') || !Number.isInteger(bits) || bits < 0 || bits > max) {
    return null;
  }
  if (raw.length === 16 && isMapped(raw) && bits >= 96) {
    return { bytes: mask(raw.slice(12), bits - 96), bits: bits - 96 };
  }
  return { bytes: mask(raw, bits), bits };
}

function mask(bytes: AddressBytes, bits: number): AddressBytes {
  const out = Uint8Array.from(bytes);
  for (let i = 0; i < out.length; i += 1) {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    out[i] = out[i]! & ((0xff << (8 - keep)) & 0xff);
  }
  return out;
}

/** cidrContains says whether an address lies in a block (families never mix). */
export function cidrContains(cidr: Cidr, address: AddressBytes): boolean {
  if (cidr.bytes.length !== address.length) return false;
  const whole = cidr.bits >> 3;
  for (let i = 0; i < whole; i += 1) if (cidr.bytes[i] !== address[i]) return false;
  const rest = cidr.bits & 7;
  if (rest === 0) return true;
  const m = (0xff << (8 - rest)) & 0xff;
  return ((address[whole] ?? 0) & m) === ((cidr.bytes[whole] ?? 0) & m);
}

/** cidrWithin says whether block `inner` lies entirely inside block `outer`. */
export function cidrWithin(inner: Cidr, outer: Cidr): boolean {
  return inner.bits >= outer.bits && cidrContains(outer, inner.bytes);
}

/** formatAddress prints address bytes the way Node does (`10.0.0.1`, `2001:db8::1`). */
export function formatAddress(bytes: AddressBytes): string {
  if (bytes.length === 4) return bytes.join('.');
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((bytes[i]! << 8) | bytes[i + 1]!);
  // The longest run of two or more zero groups becomes `::` (RFC 5952).
  let best = -1;
  let bestLength = 1;
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && groups[j] === 0) j += 1;
    if (j - i > bestLength) [best, bestLength] = [i, j - i];
    i = j === i ? i + 1 : j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLength).join(':')}`;
}
