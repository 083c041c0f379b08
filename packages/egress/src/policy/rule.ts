import {
  cidrContains,
  cidrWithin,
  parseAddress,
  parseCidr,
  type AddressBytes,
  type Cidr,
} from './address.js';

/** What a rule names: one domain, every name below a domain, or a block of addresses. */
export type RuleTarget =
  | { kind: 'domain'; name: string }
  | { kind: 'wildcard'; suffix: string }
  | { kind: 'cidr'; cidr: Cidr };

export interface PortRange {
  from: number;
  to: number;
}

/** A parsed EgressRule: its text (as written) for naming decisions, target and ports. */
export interface ParsedRule {
  text: string;
  target: RuleTarget;
  /** null: every port. */
  ports: PortRange | null;
}

const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * normalizeName lowercases a DNS name and drops its root dot, so `API.Example.com.` and
 * `api.example.com` match the same rules.
 */
export function normalizeName(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}

function parseDomain(text: string): string | null {
  const name = text.toLowerCase();
  const labels = name.split('.');
  if (name.length > 253 || !labels.every((l) => LABEL.test(l))) return null;
  // A last label that starts with a digit would make `1.2.3.4` a name (the contract's rule too).
  return /^[a-z]/.test(labels.at(-1)!) ? name : null;
}

function parseTarget(text: string): RuleTarget | null {
  if (text.startsWith('*.')) {
    const suffix = parseDomain(text.slice(2));
    return suffix === null ? null : { kind: 'wildcard', suffix };
  }
  const cidr = parseCidr(text);
  if (cidr) return { kind: 'cidr', cidr };
  const name = parseDomain(text);
  return name === null ? null : { kind: 'domain', name };
}

function parsePorts(text: string): PortRange | undefined {
  const match = /^([1-9]\d{0,4})(?:-([1-9]\d{0,4}))?$/.exec(text);
  if (!match) return undefined;
  const a = Number(match[1]);
  const b = match[2] === undefined ? a : Number(match[2]);
  // A range is the ports between its ends, written in either order (JSON Schema cannot order them).
  const [from, to] = a <= b ? [a, b] : [b, a];
  return to <= 65_535 ? { from, to } : undefined;
}

/**
 * parseRule reads one EgressRule (`api.example.com`, `*.example.com:443`, `203.0.113.0/24`,
 * `[2001:db8::/32]:8000-8999`, `2001:db8::1`), or returns null when it is not one. It accepts
 * exactly what the contract's EGRESS_RULE_PATTERN accepts (a unit test holds them together).
 */
export function parseRule(text: string): ParsedRule | null {
  let targetText = text;
  let portsText: string | undefined;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0) return null;
    targetText = text.slice(1, close);
    const rest = text.slice(close + 1);
    if (rest !== '' && !rest.startsWith(':')) return null;
    if (rest !== '') portsText = rest.slice(1);
    if (!targetText.includes(':')) return null;
  } else {
    const colons = text.split(':').length - 1;
    if (colons === 1) [targetText, portsText] = text.split(':') as [string, string];
  }
  const target = parseTarget(targetText);
  if (!target) return null;
  if (portsText === undefined) return { text, target, ports: null };
  const ports = parsePorts(portsText);
  return ports ? { text, target, ports } : null;
}

/** parseRuleOrThrow is parseRule for rules that already passed the contract. */
export function parseRuleOrThrow(text: string): ParsedRule {
  const rule = parseRule(text);
  if (!rule) throw new Error(`not an egress rule: ${text}`);
  return rule;
}

/** nameMatches says whether a (normalized) DNS name falls under a rule's target. */
export function nameMatches(target: RuleTarget, name: string): boolean {
  switch (target.kind) {
    case 'domain':
      return name === target.name;
    case 'wildcard':
      return name.endsWith(`.${target.suffix}`);
    case 'cidr':
      return false;
    default:
      return target satisfies never;
  }
}

/** addressMatches says whether an address falls in a rule's block (name rules never match an IP). */
export function addressMatches(target: RuleTarget, address: AddressBytes): boolean {
  return target.kind === 'cidr' && cidrContains(target.cidr, address);
}

/** portMatches: a rule without ports takes every port. */
export function portMatches(ports: PortRange | null, port: number): boolean {
  return ports === null || (port >= ports.from && port <= ports.to);
}

function targetWithin(inner: RuleTarget, outer: RuleTarget): boolean {
  if (inner.kind === 'cidr' || outer.kind === 'cidr') {
    return inner.kind === 'cidr' && outer.kind === 'cidr' && cidrWithin(inner.cidr, outer.cidr);
  }
  const innerName = inner.kind === 'domain' ? inner.name : inner.suffix;
  if (outer.kind === 'domain') return inner.kind === 'domain' && inner.name === outer.name;
  // Under a wildcard: an exact name below it, or a wildcard at or below its suffix.
  return inner.kind === 'domain'
    ? innerName.endsWith(`.${outer.suffix}`)
    : innerName === outer.suffix || innerName.endsWith(`.${outer.suffix}`);
}

/**
 * ruleWithin says whether everything `inner` allows is also allowed by `outer`: its target lies
 * inside outer's (exact name under an equal name or a wildcard above it, wildcard under an equal
 * or higher wildcard, CIDR inside CIDR) and its ports inside outer's. A name rule is never
 * within a CIDR rule or the reverse: which addresses a name resolves to is not known in advance.
 */
export function ruleWithin(inner: ParsedRule, outer: ParsedRule): boolean {
  if (!targetWithin(inner.target, outer.target)) return false;
  if (outer.ports === null) return true;
  if (inner.ports === null) return false;
  return inner.ports.from >= outer.ports.from && inner.ports.to <= outer.ports.to;
}

/** addressOf parses the IP a connection goes to (null for a malformed one, which is refused). */
export function addressOf(ip: string): AddressBytes | null {
  return parseAddress(ip);
}
