// Egress in the control plane: the installation's settings, a sandbox's effective policy and its
// changes for the egress point, claim narrowings, and the point's denial reports.
export {
  CLOSED_INSTALLATION,
  egressEnvFields,
  egressInstallationOf,
  installationOf,
  parseCidrList,
  type EgressInstallation,
} from './egress-installation.js';
export { egressChannel, publishEgressChange, subscribeEgressChanges } from './egress-changes.js';
export { egressPolicySource, loadSandboxEgress } from './sandbox-egress.js';
export { checkClaimEgress, getClaimEgress, storeClaimEgress } from './claim-egress.js';
export {
  egressDenialSink,
  ingestEgressDenials,
  type IngestResult,
} from './ingest-egress-reports.js';
export { listEgressEvents } from './list-egress-events.js';
export { EgressEventFeed, egressEventsChannel, publishEgressEvent } from './egress-event-feed.js';
