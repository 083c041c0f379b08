import type { CreateSnapshotRequest, Snapshot as SnapshotView } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { newId } from '@cubicle/db';
import { nowOf } from '../context.js';
import { guestClientFor } from '../guest/guest-client.js';
import { IDEMPOTENCY_TTL_MS, idempotencyHashKey, requestHash } from '../idempotency/idempotency.js';
import { emitWebhookEvent } from '../webhooks/emit-webhook-event.js';
import { homeTopLevel, packSnapshot } from './pack-snapshot.js';
import { objectsFor, storeErrorToApp, toSnapshotView, type SnapshotDeps } from './snapshot-deps.js';
import { snapshotPrefix } from './snapshot-objects.js';
import { hostChunkCache } from '../profiles/chunk-cache.js';
import { snapshotBytesUsed } from './snapshot-quota.js';

export interface CreateSnapshotResult {
  snapshot: SnapshotView;
  /** 201 new; 200 the snapshot an earlier request with the same Idempotency-Key made. */
  status: 200 | 201;
}

const isUniqueViolation = (err: unknown) =>
  typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'P2002';

/**
 * createSnapshot packs a live claim's home (or `paths` of it) through its guest into the
 * tenant's object store. The row is recorded `creating` first (with the idempotency key, in one
 * transaction, so a retry finds it), the objects are written, and the row turns `ready` only
 * after the manifest — the last object — is stored: a `ready` snapshot always has its objects.
 * A failure removes what was written, the row and the key (a retry is then a new request). The
 * tenant's `max_snapshot_bytes` is checked before (what is stored already) and after (with this
 * one): over it, nothing is kept and the answer is 429 quota_exceeded with the figures.
 */
export async function createSnapshot(
  deps: SnapshotDeps,
  tenantId: string,
  claimId: string,
  request: CreateSnapshotRequest,
  idempotencyKey?: string,
): Promise<CreateSnapshotResult> {
  const now = nowOf(deps);
  const objects = objectsFor(deps, tenantId);
  const guest = await guestClientFor(deps, { tenantId, claimId, now });
  const claim = await deps.db.claim.findFirst({
    where: { id: claimId, tenantId },
    select: { poolId: true, pool: { select: { name: true } } },
  });
  if (!claim) throw new AppError('not_found', `claim ${claimId} not found`);
  const tenant = await deps.db.tenant.findUniqueOrThrow({
    where: { id: tenantId },
    select: { maxSnapshotBytes: true, snapshotRetentionDays: true },
  });
  const limit = Number(tenant.maxSnapshotBytes);
  const usedBefore = await snapshotBytesUsed(deps.db, tenantId);
  if (usedBefore >= limit) throw quotaError(limit, usedBefore);

  const scope = `POST /v1/claims/${claimId}/snapshots`;
  const hash = idempotencyKey ? requestHash(request, idempotencyHashKey(deps.keyring)) : '';
  const id = newId('snapshot');
  const expiresAt = new Date(now.getTime() + tenant.snapshotRetentionDays * 86_400_000);
  try {
    await deps.db.$transaction(async (tx) => {
      if (idempotencyKey)
        await tx.idempotencyKey.create({
          data: {
            id: newId('idempotency_key'),
            tenantId,
            key: idempotencyKey,
            scope,
            requestHash: hash,
            resourceId: id,
            expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
          },
        });
      await tx.snapshot.create({
        data: {
          id,
          tenantId,
          name: request.name ?? null,
          paths: request.paths ?? ['.'],
          sourceClaimId: claimId,
          sourcePool: claim.pool.name,
          sourcePoolId: claim.poolId,
          expiresAt,
        },
      });
    });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    if (idempotencyKey) {
      const replayed = await replay(deps, tenantId, scope, idempotencyKey, hash);
      if (replayed) return replayed;
    }
    throw new AppError('already_exists', `a snapshot named ${request.name} already exists`);
  }

  let packed;
  try {
    const paths = request.paths ?? (await homeTopLevel(guest));
    if (paths.length === 0) throw new AppError('conflict', 'the home holds nothing to snapshot');
    packed = await packSnapshot(guest, objects, id, paths);
    const used = await snapshotBytesUsed(deps.db, tenantId, id);
    if (used + packed.storedBytes > limit) throw quotaError(limit, used + packed.storedBytes);
  } catch (err) {
    await forget(
      deps,
      objects,
      tenantId,
      id,
      idempotencyKey ? { scope, key: idempotencyKey } : null,
    );
    throw storeErrorToApp(err);
  }
  const row = await deps.db.snapshot.update({
    where: { id },
    data: {
      status: 'ready',
      sizeBytes: BigInt(packed.sizeBytes),
      storedBytes: BigInt(packed.storedBytes),
      fileCount: packed.fileCount,
      readyAt: nowOf(deps),
    },
  });
  void emitWebhookEvent(deps, tenantId, 'snapshot.created', {
    snapshot_id: id,
    name: row.name,
    claim_id: claimId,
    pool: row.sourcePool,
    size_bytes: packed.sizeBytes,
    file_count: packed.fileCount,
  });
  return { snapshot: toSnapshotView(row), status: 201 };
}

function quotaError(limit: number, used: number) {
  return new AppError(
    'quota_exceeded',
    `the tenant's snapshot storage quota (${limit} bytes) would be exceeded (${used} bytes); delete snapshots to make room`,
    { quota: 'snapshot_bytes', limit, used },
  );
}

/**
 * forget removes a failed snapshot: its objects, then its row, and the key that named it (a retry
 * is a new request). When the objects cannot be removed (the store is down) the row stays,
 * `failed`, and the retention sweep removes both later: no object is left without a row.
 */
async function forget(
  deps: SnapshotDeps,
  objects: ReturnType<typeof objectsFor>,
  tenantId: string,
  id: string,
  key: { scope: string; key: string } | null,
) {
  if (key)
    await deps.db.idempotencyKey
      .deleteMany({ where: { tenantId, scope: key.scope, key: key.key } })
      .catch(() => undefined);
  await hostChunkCache()
    .dropPrefix(tenantId, snapshotPrefix(id))
    .catch(() => undefined);
  try {
    await objects.deletePrefix(snapshotPrefix(id));
  } catch {
    await deps.db.snapshot
      .updateMany({ where: { id }, data: { status: 'failed', error: 'objects not removed yet' } })
      .catch(() => undefined);
    return;
  }
  await deps.db.snapshot.deleteMany({ where: { id } }).catch(() => undefined);
}

/** replay answers a retried create: the same snapshot, 409 for another body, or in progress. */
async function replay(
  deps: SnapshotDeps,
  tenantId: string,
  scope: string,
  key: string,
  hash: string,
): Promise<CreateSnapshotResult | null> {
  const found = await deps.db.idempotencyKey.findUnique({
    where: { tenantId_scope_key: { tenantId, scope, key } },
  });
  if (!found) return null;
  if (found.requestHash !== hash)
    throw new AppError(
      'idempotency_key_reused',
      'this Idempotency-Key was used with a different request body',
    );
  const row = found.resourceId
    ? await deps.db.snapshot.findFirst({ where: { id: found.resourceId, tenantId } })
    : null;
  if (!row || row.status !== 'ready')
    throw new AppError('idempotency_in_progress', 'the first request with this key is not done');
  return { snapshot: toSnapshotView(row), status: 200 };
}
