// The egress policy: pure rules and decisions, shared by the control plane (which computes a
// sandbox's effective policy) and the egress point (which enforces it on every query and connection).
export {
  effectivePolicy,
  type InstallationDefault,
  type OperatorRanges,
} from './effective-policy.js';
export {
  decideConnection,
  decideName,
  filterAnswers,
  withHostAddresses,
  type ConnectionAttempt,
  type Decision,
  type FilteredAnswers,
} from './decide.js';
export { parseRule, ruleWithin, normalizeName, type ParsedRule, type RuleTarget } from './rule.js';
export { addressBytes, parseAddress, parseCidr, formatAddress, type Cidr } from './address.js';
export { floorKind, type FloorKind } from './floor.js';
export type {
  EgressDenialReport,
  EgressDenialSink,
  EgressPolicySource,
  SandboxEgress,
} from './source.js';
