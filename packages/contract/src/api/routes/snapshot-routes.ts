import { ClaimPathParams } from '../claim.js';
import { listOf } from '../common.js';
import {
  CreateSnapshotRequest,
  Snapshot,
  SnapshotListQuery,
  SnapshotPathParams,
} from '../snapshot.js';
import { defineRoute, type RouteDef } from '../route-def.js';
import { claimChild, IdempotencyHeaders, readErrors, writeErrors } from './shared.js';

/** Snapshots: a claim's files into the tenant's object store, listed, read, deleted; forks take them. */
export const snapshotRoutes = {
  createSnapshot: defineRoute({
    operationId: 'createSnapshot',
    method: 'POST',
    path: claimChild('snapshots'),
    tag: 'snapshots',
    auth: 'api_key',
    summary: "Snapshot a claim's files",
    description:
      "Packs the claim's home (or the `paths` named, relative to the home; a path leaving the home is 400) through its guest driver, so it works on every backend, and stores it sealed in the tenant's object store. Answers 201 with the snapshot `ready`. Over the tenant's `snapshot_bytes` quota it is 429 `quota_exceeded` and nothing is kept. With `Idempotency-Key`, a retry with the same body answers the same snapshot.",
    params: ClaimPathParams,
    headers: IdempotencyHeaders,
    body: CreateSnapshotRequest,
    responses: { 200: Snapshot, 201: Snapshot },
    errors: [
      ...writeErrors,
      'claim_not_active',
      'quota_exceeded',
      'idempotency_key_reused',
      'idempotency_in_progress',
      'backend_unavailable',
      'service_unavailable',
      'timeout',
    ],
  }),
  listSnapshots: defineRoute({
    operationId: 'listSnapshots',
    method: 'GET',
    path: '/v1/snapshots',
    tag: 'snapshots',
    auth: 'api_key',
    summary: 'List snapshots, newest first',
    query: SnapshotListQuery,
    responses: { 200: listOf(Snapshot) },
    errors: [...readErrors],
  }),
  getSnapshot: defineRoute({
    operationId: 'getSnapshot',
    method: 'GET',
    path: '/v1/snapshots/{id}',
    tag: 'snapshots',
    auth: 'api_key',
    summary: 'Get a snapshot',
    params: SnapshotPathParams,
    responses: { 200: Snapshot },
    errors: [...readErrors],
  }),
  deleteSnapshot: defineRoute({
    operationId: 'deleteSnapshot',
    method: 'DELETE',
    path: '/v1/snapshots/{id}',
    tag: 'snapshots',
    auth: 'api_key',
    summary: 'Delete a snapshot and its stored objects',
    params: SnapshotPathParams,
    responses: { 204: null },
    errors: [...writeErrors, 'service_unavailable'],
  }),
} satisfies Record<string, RouteDef>;
