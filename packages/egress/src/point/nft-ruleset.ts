import { DNS_PORT, INTERCEPT_PORT, LINK_PREFIX } from './link-plan.js';

/** The one nftables table Cubicle adds to the host; nothing else of the host's is touched. */
export const NFT_TABLE = 'cubicle_egress';
/** The set of refused UDP flows (sandbox address . destination . port), one minute each. */
export const UDP_DENIED_SET = 'udp_denied';

/**
 * nftRuleset is the host's `inet cubicle_egress` table, the kernel's half of the egress point,
 * for every sandbox link at once (interfaces `cbe*`):
 * - prerouting (NAT): DNS (UDP and TCP port 53, whatever server a process names) goes to the
 *   resolver on the link's host address; every other TCP connection goes to the egress point's
 *   listener there (`redirect`, so SO_ORIGINAL_DST tells it where the process meant to go).
 * - filter prerouting: UDP other than DNS is dropped and remembered for a minute (a set the
 *   egress point reads to report it; QUIC falls back to TCP, see README).
 * - input: from a link, only those two listeners are reachable; every other packet to the host
 *   (its services on 0.0.0.0, the control plane, ICMP, UDP other than DNS, IPv6 link-local) is
 *   dropped. UDP other than DNS is refused by design (QUIC falls back to TCP; see README).
 * - forward: nothing from or to a link is ever routed, even on a host where ip_forward is on
 *   (Docker sets it): the sandbox's only way out is the egress point, which opens its own
 *   connections. The host's global forwarding setting is neither needed nor changed.
 * The text starts by deleting the table, so applying it replaces the table atomically (one nft
 * transaction) and is idempotent.
 */
export function nftRuleset(): string {
  const links = `iifname "${LINK_PREFIX}*"`;
  return `table inet ${NFT_TABLE}
delete table inet ${NFT_TABLE}
table inet ${NFT_TABLE} {
  # UDP other than DNS is dropped; each sandbox address, destination and port is kept a minute
  # so the egress point can report it (udp-denial-watch.ts) once per minute, not per datagram.
  set ${UDP_DENIED_SET} {
    type ipv4_addr . ipv4_addr . inet_service
    flags dynamic, timeout
    timeout 60s
    size 65536
  }
  chain filter_prerouting {
    type filter hook prerouting priority filter - 10; policy accept;
    ${links} meta nfproto ipv4 udp dport != ${DNS_PORT} add @${UDP_DENIED_SET} { ip saddr . ip daddr . udp dport } drop
  }
  chain prerouting {
    type nat hook prerouting priority dstnat; policy accept;
    ${links} meta nfproto ipv4 udp dport ${DNS_PORT} redirect to :${DNS_PORT}
    ${links} meta nfproto ipv4 tcp dport ${DNS_PORT} redirect to :${DNS_PORT}
    ${links} meta nfproto ipv4 meta l4proto tcp redirect to :${INTERCEPT_PORT}
  }
  chain input {
    type filter hook input priority filter - 10; policy accept;
    ${links} meta nfproto ipv4 udp dport ${DNS_PORT} accept
    ${links} meta nfproto ipv4 tcp dport { ${DNS_PORT}, ${INTERCEPT_PORT} } accept
    ${links} counter drop
  }
  chain forward {
    type filter hook forward priority filter - 10; policy accept;
    ${links} counter drop
    oifname "${LINK_PREFIX}*" counter drop
  }
}
`;
}
