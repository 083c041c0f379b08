import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { classifyAddress, type RefusedAddressKind } from './classify-address.js';

export { classifyAddress, type RefusedAddressKind };

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/**
 * AddressRefusal is why a host may not receive webhooks; it becomes `webhook_url_refused`. It
 * never carries what a name resolved to: the message and details would otherwise turn the
 * guard into a resolver of internal names for whoever can create webhooks. For an IP literal
 * the host is the address the caller wrote.
 */
export class AddressRefusal extends Error {
  constructor(
    readonly host: string,
    readonly kind: RefusedAddressKind | 'unresolvable',
  ) {
    super(
      kind === 'unresolvable'
        ? `${host} does not resolve`
        : `${host} ${isIP(host) !== 0 ? 'is' : 'resolves to'} an address webhooks may not reach (${kind.replace('_', '-')})`,
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
      throw new AddressRefusal(host, 'unresolvable');
    } finally {
      clearTimeout(timer);
    }
    if (addresses.length === 0) throw new AddressRefusal(host, 'unresolvable');
  }
  if (!allowPrivate)
    for (const a of addresses) {
      const kind = classifyAddress(a.address);
      if (kind) throw new AddressRefusal(host, kind);
    }
  return addresses[0]!;
}
