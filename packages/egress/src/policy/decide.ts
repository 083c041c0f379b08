import type { EffectiveEgressPolicy, EffectiveEgressRule } from '@cubicle/contract/api';
import { parseAddress, parseCidr, type AddressBytes, type Cidr } from './address.js';
import { floorKind, type Floor } from './floor.js';
import {
  addressMatches,
  nameMatches,
  normalizeName,
  parseRuleOrThrow,
  portMatches,
  type ParsedRule,
} from './rule.js';

/**
 * A Decision says whether egress is allowed and which rule decided, in words an event can carry:
 * `pool.deny[2]: *.ads.example`, `claim.allow[0]: api.example.com:443`, `default:none`,
 * `default:open`, `default:allowlist` (no allow rule matched), `operator:private-ranges`,
 * `operator:metadata`, `operator:loopback`, `operator:host-addresses`, …
 */
export interface Decision {
  allowed: boolean;
  rule: string;
}

/** One connection the egress point sees: the name when SNI, Host or the resolver told it. */
export interface ConnectionAttempt {
  name?: string | null;
  ip: string;
  port: number;
  protocol: 'tcp' | 'udp';
}

interface LabelledRule {
  parsed: ParsedRule;
  label: string;
}

interface CompiledPolicy {
  policy: EffectiveEgressPolicy;
  allow: LabelledRule[];
  deny: LabelledRule[];
  floor: Floor;
  hasAddressAllow: boolean;
}

const compiled = new WeakMap<EffectiveEgressPolicy, CompiledPolicy>();

const labelled = (list: 'allow' | 'deny') => (r: EffectiveEgressRule) => ({
  parsed: parseRuleOrThrow(r.rule),
  label: `${r.source}.${list}[${r.index}]: ${r.rule}`,
});

const cidrs = (texts: readonly string[]): Cidr[] =>
  texts.map((text) => {
    const cidr = parseCidr(text);
    if (!cidr) throw new Error(`not a CIDR: ${text}`);
    return cidr;
  });

/**
 * compile parses a policy's rules once per policy object (the egress point decides many
 * connections under one policy); policies are treated as immutable values.
 */
function compile(policy: EffectiveEgressPolicy): CompiledPolicy {
  const hit = compiled.get(policy);
  if (hit) return hit;
  const allow = policy.allow.map(labelled('allow'));
  const result: CompiledPolicy = {
    policy,
    allow,
    deny: policy.deny.map(labelled('deny')),
    floor: {
      operatorAllow: cidrs(policy.operator_allow),
      hostAddresses: cidrs(policy.host_addresses),
    },
    hasAddressAllow: allow.some((r) => r.parsed.target.kind === 'cidr'),
  };
  compiled.set(policy, result);
  return result;
}

const allowed = (rule: string): Decision => ({ allowed: true, rule });
const denied = (rule: string): Decision => ({ allowed: false, rule });

/**
 * decideName decides a DNS query. A deny rule without ports refuses the name; `none` refuses
 * everything; `open` allows; `allowlist` allows a name under an allow rule (any ports). When the
 * allowlist also has CIDR rules, a name outside it is still resolved (`default:allowlist-by-address`)
 * so its answers can be kept where they fall in an allowed block: the resolver must pass every
 * answer of an allowed name through filterAnswers, which also drops rebinding answers.
 */
export function decideName(policy: EffectiveEgressPolicy, name: string): Decision {
  const c = compile(policy);
  const n = normalizeName(name);
  const deny = c.deny.find((r) => r.parsed.ports === null && nameMatches(r.parsed.target, n));
  if (deny) return denied(deny.label);
  switch (policy.mode) {
    case 'none':
      return denied('default:none');
    case 'open':
      return allowed('default:open');
    case 'allowlist': {
      const allow = c.allow.find((r) => nameMatches(r.parsed.target, n));
      if (allow) return allowed(allow.label);
      return c.hasAddressAllow
        ? allowed('default:allowlist-by-address')
        : denied('default:allowlist');
    }
    default:
      return policy.mode satisfies never;
  }
}

/**
 * decideAddress is decideConnection with the port optional: without one, a deny rule refuses only
 * when it takes every port, and an allow rule allows when it takes some port.
 */
function decideAddress(
  c: CompiledPolicy,
  name: string | null,
  address: AddressBytes,
  port: number | undefined,
): Decision {
  const kind = floorKind(address, c.floor);
  if (kind) return denied(`operator:${kind}`);
  const targets = (r: LabelledRule) =>
    (name !== null && nameMatches(r.parsed.target, name)) ||
    addressMatches(r.parsed.target, address);
  const deny = c.deny.find(
    (r) =>
      targets(r) &&
      (port === undefined ? r.parsed.ports === null : portMatches(r.parsed.ports, port)),
  );
  if (deny) return denied(deny.label);
  switch (c.policy.mode) {
    case 'none':
      return denied('default:none');
    case 'open':
      return allowed('default:open');
    case 'allowlist': {
      const allow = c.allow.find(
        (r) => targets(r) && (port === undefined || portMatches(r.parsed.ports, port)),
      );
      return allow ? allowed(allow.label) : denied('default:allowlist');
    }
    default:
      return c.policy.mode satisfies never;
  }
}

/**
 * decideConnection decides one TCP/UDP connection. The floor comes first and is judged on the IP
 * actually connected to, so an allowed name that resolves into a private, metadata or host
 * range is refused (DNS rebinding); then deny rules (by name when known, and by IP); then the
 * mode, and in `allowlist` the first allow rule matching the name or the IP, and the port.
 * The protocol does not change the verdict today: rules cover TCP and UDP alike.
 */
export function decideConnection(
  policy: EffectiveEgressPolicy,
  attempt: ConnectionAttempt,
): Decision {
  const address = parseAddress(attempt.ip);
  if (!address) return denied('default:invalid-address');
  const name = attempt.name ? normalizeName(attempt.name) : null;
  return decideAddress(compile(policy), name, address, attempt.port);
}

/** The outcome of filtering one DNS answer set. */
export interface FilteredAnswers {
  /** The answers the sandbox may get. */
  kept: string[];
  /** The answers withheld, each with the rule that refused it (for `egress.denied` events). */
  refused: { ip: string; decision: Decision }[];
}

/**
 * filterAnswers is the resolver's guard against DNS rebinding and the partner of decideName: of
 * the addresses an allowed name resolved to, it keeps those a connection could reach under the
 * policy on some port (never the floor's ranges, never a port-less denied block, and in
 * `allowlist` only addresses the name's rule or an allowed block covers). When nothing is kept
 * the resolver answers as for a refused name. decideConnection still judges every connection,
 * so an address the sandbox learns elsewhere is held to the same policy.
 */
export function filterAnswers(
  policy: EffectiveEgressPolicy,
  name: string,
  addresses: readonly string[],
): FilteredAnswers {
  const c = compile(policy);
  const n = normalizeName(name);
  const result: FilteredAnswers = { kept: [], refused: [] };
  for (const ip of addresses) {
    const address = parseAddress(ip);
    const decision = address
      ? decideAddress(c, n, address, undefined)
      : denied('default:invalid-address');
    if (decision.allowed) result.kept.push(ip);
    else result.refused.push({ ip, decision });
  }
  return result;
}

/**
 * withHostAddresses adds addresses the egress point learns at run time (the node's own
 * interfaces) to a policy's closed host addresses, returning a new policy value.
 */
export function withHostAddresses(
  policy: EffectiveEgressPolicy,
  addresses: readonly string[],
): EffectiveEgressPolicy {
  return { ...policy, host_addresses: [...new Set([...policy.host_addresses, ...addresses])] };
}
