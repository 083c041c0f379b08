/** A denied destination as the Network tab lists it. */
export interface Destination {
  name: string | null;
  ip: string | null;
  port: number | null;
}

const DOMAIN = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/;

/**
 * allowRuleFor is the narrowest allow rule that lets a destination through: its name (and port,
 * when known), else its address (IPv6 in brackets when a port follows). null when neither is a
 * name or address a rule can hold. The API validates the rule again.
 */
export function allowRuleFor(d: Destination): string | null {
  const port = d.port !== null && d.port > 0 && d.port <= 65_535 ? `:${d.port}` : '';
  const name = d.name?.toLowerCase().replace(/\.$/, '') ?? null;
  if (name && DOMAIN.test(name)) return `${name}${port}`;
  if (d.ip && IPV4.test(d.ip)) return `${d.ip}${port}`;
  if (d.ip && d.ip.includes(':') && /^[0-9a-f:.]+$/i.test(d.ip))
    return port ? `[${d.ip}]${port}` : d.ip;
  return null;
}

/**
 * canAllowForPool says whether adding a pool allow rule would let this denial through: only a
 * denial for want of an allow rule (`default:none`, `default:allowlist`), never one by a deny
 * rule or by the operator's closed ranges, and not while the claim's own allow list replaces the
 * pool's.
 */
export function canAllowForPool(rule: string, claimHasAllowList: boolean): boolean {
  return !claimHasAllowList && (rule === 'default:none' || rule === 'default:allowlist');
}
