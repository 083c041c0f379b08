import { z } from 'zod';
import { named } from '../registry.js';
import {
  ClaimId,
  EgressEventId,
  listOf,
  listQueryOf,
  PoolId,
  PORT_PATTERN,
  SandboxId,
  TenantId,
  Timestamp,
} from './common.js';
import { IPV4_PATTERN, IPV6_PATTERN } from './ip-patterns.js';

/**
 * EgressMode: `none` reaches nothing, `allowlist` reaches exactly the `allow` rules, `open`
 * reaches the internet. In every mode `deny` rules still apply, and the operator's floor
 * (host loopback, control plane, node addresses, private, link-local and metadata ranges)
 * stays closed unless the installation's operator opens a range.
 */
export const EgressMode = named('EgressMode', z.enum(['none', 'allowlist', 'open']));
export type EgressMode = z.infer<typeof EgressMode>;

/** EGRESS_MODE_ORDER ranks modes from most to least restrictive (a claim may only go down). */
export const EGRESS_MODE_ORDER: Record<EgressMode, number> = { none: 0, allowlist: 1, open: 2 };

const LABEL = '[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
// The last label starts with a letter, so a dotted quad is never read as a domain.
const DOMAIN = `(\\*\\.)?(${LABEL}\\.)*[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?`;
const V4_CIDR = `${IPV4_PATTERN}(/(3[0-2]|[12]?[0-9]))?`;
const V6_CIDR = `(${IPV6_PATTERN})(/(12[0-8]|1[01][0-9]|[1-9]?[0-9]))?`;
const PORTS = `${PORT_PATTERN}(-${PORT_PATTERN})?`;

/**
 * EGRESS_RULE_PATTERN is the grammar of one rule: a target and optional ports.
 * Targets: an exact domain (`api.example.com`), a wildcard (`*.example.com`: any name below it,
 * not the name itself), an IPv4 address or CIDR (`203.0.113.0/24`), an IPv6 address or CIDR
 * (`2001:db8::/32`, in brackets when ports follow: `[2001:db8::/32]:443`). Ports: `:443` or a
 * range `:8000-8999` (the ports between its two ends, in either order). The egress package parses
 * the same grammar (a unit test holds them together).
 */
export const EGRESS_RULE_PATTERN = `^((${DOMAIN}|${V4_CIDR})(:${PORTS})?|${V6_CIDR}|\\[${V6_CIDR}\\](:${PORTS})?)$`;

const ruleRegex = new RegExp(EGRESS_RULE_PATTERN);

export const EgressRule = named(
  'EgressRule',
  z
    .string()
    .max(300)
    .regex(ruleRegex, 'an egress rule: domain, *.domain, IP or CIDR, optionally :port or :lo-hi'),
);
export type EgressRule = z.infer<typeof EgressRule>;

const RuleList = z.array(EgressRule).max(256);

/**
 * EgressPolicy is a pool's `egress`: a mode and its rules. Rules are strings (see EgressRule) so
 * a denied destination from an `egress.denied` event can be pasted into `allow` as it is.
 */
export const EgressPolicy = named(
  'EgressPolicy',
  z.strictObject({
    mode: EgressMode,
    allow: RuleList.default([]),
    deny: RuleList.default([]),
  }),
);
export type EgressPolicy = z.infer<typeof EgressPolicy>;
export type EgressPolicyInput = z.input<typeof EgressPolicy>;

/**
 * EgressNarrowing is a claim's `egress`: it may only narrow its pool's policy. `mode` may only be
 * as or more restrictive (none < allowlist < open); `allow`, when given, replaces the pool's
 * allow list and every rule must lie within one of the pool's (or the pool must be `open`);
 * `deny` rules are added to the pool's. A widening is refused with `egress_widens_pool`.
 */
export const EgressNarrowing = named(
  'EgressNarrowing',
  z.strictObject({
    mode: EgressMode.optional(),
    allow: RuleList.optional(),
    deny: RuleList.optional(),
  }),
);
export type EgressNarrowing = z.infer<typeof EgressNarrowing>;

/** Where a rule of an effective policy came from: the pool's policy or the claim's narrowing. */
export const EgressRuleSource = z.enum(['pool', 'claim']);

export const EffectiveEgressRule = z.strictObject({
  rule: EgressRule,
  source: EgressRuleSource,
  /** The rule's index in its source list, so a decision names it (`pool.deny[2]: …`). */
  index: z.number().int().min(0),
});
export type EffectiveEgressRule = z.infer<typeof EffectiveEgressRule>;

/**
 * EffectiveEgressPolicy is what the egress point enforces for one sandbox: the pool's policy
 * (or the installation default) narrowed by the claim, with the operator's ranges. It crosses
 * from the control plane to the egress point as JSON and is parsed there with this schema.
 */
export const EffectiveEgressPolicy = named(
  'EffectiveEgressPolicy',
  z.strictObject({
    mode: EgressMode,
    /** Where the mode was set: the installation default, the pool, or the claim. */
    mode_source: z.enum(['installation', 'pool', 'claim']),
    allow: z.array(EffectiveEgressRule),
    deny: z.array(EffectiveEgressRule),
    /** CIDRs the operator opened in the floor (installation config, never a tenant's). */
    operator_allow: z.array(z.string()),
    /** Addresses of the control plane and nodes: closed like private ranges (installation config). */
    host_addresses: z.array(z.string()),
  }),
);
export type EffectiveEgressPolicy = z.infer<typeof EffectiveEgressPolicy>;

export const EgressProtocol = z.enum(['tcp', 'udp', 'dns']);
export type EgressProtocol = z.infer<typeof EgressProtocol>;

/**
 * EgressEvent is one line of `GET /v1/claims/{id}/egress-events`: denials of one destination
 * within one minute collapse into one event with a `count`.
 */
export const EgressEvent = named(
  'EgressEvent',
  z.strictObject({
    id: EgressEventId,
    type: z.literal('egress.denied'),
    claim_id: ClaimId,
    pool_id: PoolId,
    /** The start of the minute the denials fall in. */
    minute: Timestamp,
    first_at: Timestamp,
    last_at: Timestamp,
    count: z.number().int().min(1),
    /** `dns` for a refused query, else the connection's transport. */
    protocol: EgressProtocol,
    /** The name asked for or connected to (SNI, Host, DNS question) when known. */
    name: z.string().nullable(),
    ip: z.string().nullable(),
    port: z.number().int().min(0).max(65_535).nullable(),
    /** The rule that denied it, e.g. `pool.deny[2]: *.ads.example`, `default:none`, `operator:private-ranges`. */
    rule: z.string(),
    /** The sandbox process that tried, when the egress point could tell. */
    process: z.string().nullable(),
  }),
);
export type EgressEvent = z.infer<typeof EgressEvent>;

/**
 * EgressDeniedData is the `data` of an `egress.denied` webhook: sent once per collapsed line, when
 * a destination is first denied in a minute (`count` is the count then; later denials of that
 * minute raise the count on the event list only).
 */
export const EgressDeniedData = named(
  'EgressDeniedData',
  z.strictObject({
    event_id: EgressEventId,
    claim_id: ClaimId,
    pool_id: PoolId,
    sandbox_id: SandboxId.nullable(),
    at: Timestamp,
    protocol: EgressProtocol,
    name: z.string().nullable(),
    ip: z.string().nullable(),
    port: z.number().int().min(0).max(65_535).nullable(),
    rule: z.string(),
    process: z.string().nullable(),
    count: z.number().int().min(1),
  }),
);
export type EgressDeniedData = z.infer<typeof EgressDeniedData>;

/** EgressEventListQuery pages a claim's events newest first (by id: a collapsed line keeps its id). */
export const EgressEventListQuery = listQueryOf(EgressEventId);
export type EgressEventListQuery = z.infer<typeof EgressEventListQuery>;

export const EgressEventList = named('EgressEventList', listOf(EgressEvent));
export type EgressEventList = z.infer<typeof EgressEventList>;

/**
 * ClaimEgress answers `GET /v1/claims/{id}/egress`: what the claim asked for, the policy its
 * sandbox lives under, and destinations seen (allowed and denied, with counts) for the Network tab.
 */
export const ClaimEgress = named(
  'ClaimEgress',
  z.strictObject({
    /** The claim's narrowing as given at create; null when it gave none. */
    narrowing: EgressNarrowing.nullable(),
    effective: EffectiveEgressPolicy,
    /**
     * Whether the claim's running desktop has a link to the egress point. `none`: it was
     * provisioned under mode `none` without one (local backend), so no later policy change
     * reaches it — it stays without network until the claim ends; a new claim of the pool gets
     * a desktop provisioned under the pool's policy then. `linked`: policy changes apply to it
     * within a second. null while the claim holds no desktop.
     */
    link: z.enum(['linked', 'none']).nullable(),
    /**
     * Destinations the claim's sandbox reached or was refused, collapsed by destination and
     * rule, most attempts first (at most 200). Allowed ones appear when the egress point reports them.
     */
    destinations: z.array(
      z.strictObject({
        verdict: z.enum(['allowed', 'denied']),
        name: z.string().nullable(),
        ip: z.string().nullable(),
        port: z.number().int().nullable(),
        rule: z.string(),
        count: z.number().int().min(1),
        last_at: Timestamp,
      }),
    ),
  }),
);
export type ClaimEgress = z.infer<typeof ClaimEgress>;

/**
 * EGRESS_CHANGED_CHANNEL is the Redis pub/sub channel (after the deployment's prefix and a colon)
 * on which the control plane tells egress points that effective policies may have changed; a
 * point then reloads the named sandboxes' policies (all of a pool's, or one sandbox's).
 */
export const EGRESS_CHANGED_CHANNEL = 'egress:changed';

export const EgressChange = z.union([
  z.strictObject({ pool_id: PoolId }),
  z.strictObject({ sandbox_id: SandboxId }),
  /** The tenant's credential bindings changed (a stored secret with `inject` written or deleted). */
  z.strictObject({ tenant_id: TenantId }),
]);
export type EgressChange = z.infer<typeof EgressChange>;
