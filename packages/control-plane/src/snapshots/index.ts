// Snapshots and forks (issue 34): a claim's home into the tenant's object store through the guest
// archive, and claims whose desktops are restored from one.
export { createSnapshot, type CreateSnapshotResult } from './create-snapshot.js';
export { deleteSnapshot, getSnapshot, listSnapshots, sweepSnapshots } from './manage-snapshots.js';
export { claimOrFork, forkClaims, type ClaimOrForkResult, type ForkResult } from './fork-claims.js';
export type { SnapshotDeps } from './snapshot-deps.js';
