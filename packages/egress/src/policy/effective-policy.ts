import {
  EGRESS_MODE_ORDER,
  type EffectiveEgressPolicy,
  type EffectiveEgressRule,
  type EgressMode,
  type EgressNarrowing,
  type EgressPolicy,
} from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { parseRuleOrThrow, ruleWithin } from './rule.js';

/** The installation default: what a pool without its own `egress` gets (env / Helm value). */
export type InstallationDefault = Extract<EgressMode, 'none' | 'open'>;

/** The operator's ranges (installation config; a tenant never sets these). */
export interface OperatorRanges {
  /** CIDRs opened in the floor (e.g. an internal package mirror at 10.20.0.5/32). */
  allow: readonly string[];
  /** The control plane's and nodes' own addresses, closed like private ranges. */
  hostAddresses?: readonly string[];
}

const fromList = (rules: readonly string[], source: EffectiveEgressRule['source']) =>
  rules.map((rule, index) => ({ rule, source, index }));

function widening(message: string, details: Record<string, unknown>): AppError {
  return new AppError('egress_widens_pool', message, details);
}

/**
 * effectivePolicy is the policy one sandbox lives under: the pool's `egress` (or, when the pool
 * has none, the installation default with no rules) narrowed by its claim's. A claim narrows by
 *   - `mode`: the same or more restrictive (none < allowlist < open);
 *   - `allow`: replaces the pool's allow list, each rule within one of the pool's rules (same or
 *     narrower name, CIDR and ports), any rule when the pool is `open` (which then becomes
 *     `allowlist`), none at all when the pool is `none`;
 *   - `deny`: added after the pool's.
 * Anything else is a widening, refused with `egress_widens_pool` naming the field and rule.
 * The operator's ranges ride along for the floor; they are never the tenant's to change.
 *
 * `widening: 'drop'` is for a narrowing accepted earlier under a pool policy that has since
 * changed: what would now widen is dropped instead (a wider mode falls to the pool's, allow
 * rules outside the pool's are left out), so the claim stays at or below its pool.
 */
export function effectivePolicy(
  installationDefault: InstallationDefault,
  operator: OperatorRanges,
  pool: EgressPolicy | null,
  claim: EgressNarrowing | null,
  options: { widening?: 'refuse' | 'drop' } = {},
): EffectiveEgressPolicy {
  const isLenient = options.widening === 'drop';
  const base: EgressPolicy = pool ?? { mode: installationDefault, allow: [], deny: [] };
  const baseSource = pool ? 'pool' : 'installation';
  const floor = {
    operator_allow: [...operator.allow],
    host_addresses: [...(operator.hostAddresses ?? [])],
  };
  const poolRules = { allow: fromList(base.allow, 'pool'), deny: fromList(base.deny, 'pool') };
  if (!claim) return { mode: base.mode, mode_source: baseSource, ...poolRules, ...floor };

  const isWiderMode = claim.mode && EGRESS_MODE_ORDER[claim.mode] > EGRESS_MODE_ORDER[base.mode];
  if (isWiderMode && !isLenient) {
    throw widening(`egress mode ${claim.mode} is wider than the pool's ${base.mode}`, {
      field: 'egress.mode',
      pool_mode: base.mode,
      claim_mode: claim.mode,
    });
  }
  const claimMode = isWiderMode ? undefined : claim.mode;
  let mode = claimMode ?? base.mode;
  let modeSource: EffectiveEgressPolicy['mode_source'] = claimMode ? 'claim' : baseSource;
  let allow = poolRules.allow;
  if (claim.allow !== undefined) {
    const outside = allowOutside(claim.allow, base);
    if (outside && !isLenient) throw outside;
    allow = fromList(claim.allow, 'claim').filter((r) =>
      isLenient && outside ? withinBase(r.rule, base) : true,
    );
    // A claim allow list under an open pool only means something as an allowlist.
    if (mode === 'open') [mode, modeSource] = ['allowlist', 'claim'];
  }
  return {
    mode,
    mode_source: modeSource,
    allow,
    deny: [...poolRules.deny, ...fromList(claim.deny ?? [], 'claim')],
    ...floor,
  };
}

function withinBase(text: string, base: EgressPolicy): boolean {
  if (base.mode === 'open') return true;
  if (base.mode === 'none') return false;
  const inner = parseRuleOrThrow(text);
  return base.allow.some((rule) => ruleWithin(inner, parseRuleOrThrow(rule)));
}

/** allowOutside is the refusal for the first claim allow rule outside the pool's, or null. */
function allowOutside(claimAllow: readonly string[], base: EgressPolicy): AppError | null {
  const index = claimAllow.findIndex((text) => !withinBase(text, base));
  if (index < 0) return null;
  const text = claimAllow[index]!;
  return widening(
    base.mode === 'none'
      ? `the pool's egress mode is none: a claim cannot allow ${text}`
      : `egress rule ${text} is not within any of the pool's allow rules`,
    { field: `egress.allow[${index}]`, rule: text, pool_mode: base.mode },
  );
}
