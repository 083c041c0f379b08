// The egress point of the local backend: per-sandbox network namespaces linked to the host,
// the host's nftables table, and the resolver and TCP splicer that apply each sandbox's policy.
export { EgressPoint, type EgressPointOptions, type SandboxNetwork } from './egress-point.js';
export type { EgressDenial, EgressDenialBatchItem, DenialReporter } from './denial-batcher.js';
export {
  caBundleWith,
  type CredentialInjection,
  type EgressCredentials,
  type InjectionCa,
} from './inject-credentials.js';
export {
  DEFAULT_LINK_RANGE,
  INTERCEPT_PORT,
  LINK_PREFIX,
  NETNS_PREFIX,
  parseNetnsName,
} from './link-plan.js';
export { NFT_TABLE } from './nft-ruleset.js';
