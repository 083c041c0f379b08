// The public face of @cubicle/control-plane: what the API, the worker, the viewer, the backends,
// the cross-cutting tests and the scripts import, by name. Everything else stays inside the
// package (its own tests import modules directly). Add a name here only when something outside
// uses it: public-face.test.ts fails on a name that nothing outside the package mentions.

// The control plane's resources (made once per process) and the narrow views services take.
export {
  createResources,
  type Deps,
  type Resources,
  type WebhookWorkerDeps,
  type WorkerDeps,
} from './resources.js';
export { type Enqueue, nudgeReconcile, type ViewerEvents } from './context.js';
// The object store's settings (CUBICLE_OBJECT_STORE, CUBICLE_S3_*), read by the API's and the worker's env.ts.
export { checkObjectStoreEnv, objectStoreEnvFields, objectStoreOf } from './objects/index.js';
export type { ObjectStore } from '@cubicle/object-store';
export { pageById } from './page-by-id.js';

// What sandbox backends (local, Kubernetes, hollow) implement; endpoints the viewer and tests read.
export { guestSocketPath, parseVncEndpoint, vncUnixEndpoint } from './backend/endpoints.js';
export type {
  Backends,
  ProvisionedSandbox,
  ProvisionInput,
  SandboxBackend,
} from './backend/types.js';

// Sealing of guest tokens and secrets.
export { openEnvelope, secretAad } from './crypto/envelope.js';
export { type Keyring, newKeyringSpec, open, parseKeyring, seal } from './crypto/keyring.js';

// Pools, claims and their sandboxes.
export { applyPool } from './pools/apply-pool.js';
export { deletePool, getPool, listPools } from './pools/manage-pools.js';
export { createClaim } from './claims/create-claim.js';
export { LiveClaimMemory } from './claims/live-claim-memory.js';
export {
  extendClaim,
  getClaim,
  heartbeatClaim,
  listClaims,
  releaseClaim,
} from './claims/manage-claims.js';
export { destroySandbox, provisionSandbox } from './sandboxes/provision-sandbox.js';
export { poolSandboxCountRows } from './repositories/sandboxes.js';

// The worker's loops: reconcile, sweep, reclaim.
export { reconcileAll } from './reconcile/reconcile-all.js';
export { reconcilePool } from './reconcile/reconcile-pool.js';
export { sweepBackend } from './reconcile/sweep-backend.js';
export { reclaimClaims } from './reclaim/reclaim-claims.js';

// The one liveness rule (the viewer mints tickets only for live claims).
export { isClaimLive } from './lifecycle/claim-liveness.js';

// Calls into a claimed desktop, and what they recorded.
export { answerGuestCallJob, answerLostGuestCall } from './guest-calls/answer-guest-call.js';
export { GUEST_CALL_MAX_WAIT_MS } from './guest-calls/guest-call-bounds.js';
export { guestAttachChannel } from './guest/guest-attach.js';
export { sandboxGuestClient } from './guest/guest-client.js';
export { primeDesktop } from './sandboxes/prime-desktop.js';
export { GuestCalls } from './guest-calls/guest-calls.js';

// Pause and resume: the API's routes and viewer hook, the worker's lane job, activity hook and sweep.
export { pauseClaim, resumeBeforeViewing, resumeClaim } from './pause/pause-claim.js';
export { answerPauseJob, resumeForActivity } from './pause/pause-lane.js';
export { resumePausedClaim } from './pause/set-claim-paused.js';
export { pauseIdleClaims } from './pause/pause-idle-claims.js';
export { listActions } from './guest-calls/list-actions.js';

// Handoffs: an agent hands its desktop to a human with a lease on control (the REST routes, the
// MCP tool and the viewer's control stream call these).
export { requestHandoff } from './handoffs/request-handoff.js';
export { endHandoff } from './handoffs/end-handoff.js';
export { expireHandoffs, renewHandoffLease } from './handoffs/handoff-lease.js';
export { getHandoff, listHandoffs } from './handoffs/list-handoffs.js';

// Runs: commands with streamed events.
export { createRun } from './runs/create-run.js';
export { RunEventFeed } from './runs/follow-run-events.js';
export {
  cancelRun,
  findRun,
  getRun,
  listClaimRuns,
  listRunEvents,
  writeRunStdin,
} from './runs/manage-runs.js';
export { listRuns } from './runs/list-runs.js';
export { RunSupervisor } from './runs/run-supervisor.js';

// Secrets: claim secrets, stored secrets, log redaction, the admin CLI.
export { addClaimSecret, deleteClaimSecret, listClaimSecrets } from './secrets/claim-secrets.js';
export { createClaimWithSecrets } from './secrets/create-claim-with-secrets.js';
export { secretLogHooks } from './secrets/log-redaction.js';
export { runSecretsCli } from './secrets/secrets-cli.js';
export { secretsForRun } from './secrets/secrets-for-run.js';
export {
  deleteStoredSecret,
  listStoredSecrets,
  putStoredSecret,
} from './secrets/stored-secrets.js';
export { deliverOnAttach, syncClaimSecrets } from './secrets/sync-claim-secrets.js';

// Viewer streams: revocation events.
export {
  publishViewerRevocation,
  viewerChannel,
  type ViewerRevocation,
} from './viewer/viewer-events.js';

// Webhooks: management, events, delivery.
export { announceRunsFinished } from './runs/announce-runs.js';
export {
  deliverWebhook,
  relayWebhookDeliveries,
  type WebhookDeliveryOptions,
} from './webhooks/deliver-webhook.js';
export { emitWebhookEvent } from './webhooks/emit-webhook-event.js';
export {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhookDeliveries,
  listWebhooks,
  rotateWebhookSecret,
  updateWebhook,
} from './webhooks/manage-webhooks.js';
export { retryWebhookDelivery } from './webhooks/retry-webhook-delivery.js';

// Usage metering, insights, kept screenshots, viewer connections.
export { getClaimScreenshot, pruneClaimScreenshots } from './usage/claim-screenshots.js';
export { poolInsights } from './usage/pool-insights.js';
export { getUsage } from './usage/query-usage.js';
export {
  egressEnvFields,
  egressInstallationOf,
  type EgressInstallation,
} from './egress/egress-installation.js';
export { egressPolicySource, loadSandboxEgress } from './egress/sandbox-egress.js';
export { egressCredentialsOf } from './egress/egress-credentials.js';
export { getClaimEgress } from './egress/claim-egress.js';
export { egressDenialSink, ingestEgressDenials } from './egress/ingest-egress-reports.js';
export { hasClaimEnded, listEgressEvents } from './egress/list-egress-events.js';
export { getClaimTimeline } from './timeline/index.js';
export {
  claimOrFork,
  createSnapshot,
  deleteSnapshot,
  getSnapshot,
  listSnapshots,
  sweepSnapshots,
  type SnapshotDeps,
} from './snapshots/index.js';
export { EgressEventFeed } from './egress/egress-event-feed.js';
export { rollupUsage } from './usage/rollup-usage.js';
export { runUsageCli } from './usage/usage-cli.js';
export {
  listViewerConnections,
  recordViewerConnected,
  recordViewerDisconnected,
} from './usage/viewer-connections.js';
// Video recordings of claims (issue 35).
export {
  getRecording,
  openRecordingMedia,
  startRecordingPuller,
  sweepRecordings,
  type RecordingDeps,
} from './recordings/index.js';
// Persistent profiles (issue 34): claims with `profile`, saves, the profiles API and its sweep.
export {
  claimWithProfile,
  deleteProfile,
  destroySandboxSavingProfile,
  getProfile,
  hasObjects,
  listProfiles,
  saveClaimProfile,
  sweepProfiles,
  type ProfileDeps,
} from './profiles/index.js';
