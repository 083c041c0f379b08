import type { Claim, ClaimBatch, CreateClaimRequest } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { nowOf } from '../context.js';
import { releaseClaim } from '../claims/manage-claims.js';
import { isClaimActive } from '../lifecycle/claim-liveness.js';
import { guestClientFor } from '../guest/guest-client.js';
import type { IdempotencyInput } from '../idempotency/idempotency.js';
import { createClaimWithSecrets } from '../secrets/create-claim-with-secrets.js';
import type { ApiKeyRole } from '../secrets/usable-by.js';
import { HostChunkFiles } from '../profiles/host-stage.js';
import { restoreSnapshot, sharedChunkSource } from './restore-snapshot.js';
import { objectsFor, storeErrorToApp, type SnapshotDeps } from './snapshot-deps.js';
import { chunkKey, readManifest } from './snapshot-objects.js';
import { hostChunkCache } from '../profiles/chunk-cache.js';

/** One fork answers as a claim did (201 new, 200 replayed); a batch always answers 201. */
export type ForkResult = { status: 200 | 201; body: Claim } | { status: 201; body: ClaimBatch };

/**
 * forkClaims answers a claim request with `from_snapshot`: `count` claims (one without it), each
 * taken on the plain claim path (a warm desktop in one statement) and then given the snapshot's
 * files through its guest before the call answers. All or none: if one claim cannot be taken or
 * restored, the others are released and the error is the answer.
 *
 * Idempotency holds for the batch: claim i of n is taken under the caller's key with the scope
 * `… #fork i/n`, so a retry with the same key and body replays each of the same claims (and
 * restores nothing again); a failed batch forgets its keys, so its retry is a new request. The
 * snapshot's manifest is read before anything is taken (a store outage takes no desktop), and
 * each chunk is read from the store once for all the forks of the call (and, for local desktops,
 * written once into a host stage and linked into the others': HostChunkFiles).
 *
 * A fork never answers 202: a desktop not ready within `wait_seconds` is released and the call
 * answers 504 timeout (a pending fork would hand the caller a desktop without its files).
 */
export async function forkClaims(
  deps: SnapshotDeps,
  tenantId: string,
  poolName: string,
  request: CreateClaimRequest & { from_snapshot: string },
  idempotency?: Omit<IdempotencyInput, 'body'>,
  role: ApiKeyRole = 'admin',
): Promise<ForkResult> {
  if (request.count !== undefined && request.name !== undefined)
    throw fieldError('name', 'a named claim is one claim: `count` and `name` do not go together');
  const snapshot = await deps.db.snapshot.findFirst({
    where: { id: request.from_snapshot, tenantId },
    select: { id: true, status: true },
  });
  if (!snapshot) throw new AppError('not_found', `snapshot ${request.from_snapshot} not found`);
  if (snapshot.status !== 'ready')
    throw new AppError('conflict', `snapshot ${snapshot.id} is ${snapshot.status}, not ready`);
  const objects = objectsFor(deps, tenantId);
  const manifest = await readManifest(objects, snapshot.id).catch((err: unknown) => {
    throw storeErrorToApp(err);
  });
  // Forks restore into local desktops (host stages) from this machine's chunk cache when it holds
  // the snapshot's chunks; the first fork of a chunk that is not there puts it there.
  const files = new HostChunkFiles(sharedChunkSource(objects, snapshot.id), {
    cache: hostChunkCache(),
    tenantId,
    keyOf: (hash) => chunkKey(snapshot.id, hash),
  });

  const n = request.count ?? 1;
  const scopeOf = (i: number) =>
    idempotency && request.count !== undefined
      ? `${idempotency.scope} #fork ${i + 1}/${n}`
      : idempotency?.scope;
  const settled = await Promise.allSettled(
    Array.from({ length: n }, async (_, i) => {
      const scope = scopeOf(i);
      const taken = await createClaimWithSecrets(
        deps,
        tenantId,
        poolName,
        request,
        idempotency && scope ? { ...idempotency, scope } : undefined,
        role,
      );
      if (!taken.fresh) return taken;
      if (!isClaimActive(taken.claim.status)) {
        await releaseClaim(deps, tenantId, taken.claim.id).catch(() => undefined);
        throw new AppError(
          'timeout',
          `no desktop of pool ${poolName} was ready within wait_seconds (${request.wait_seconds}) to restore the snapshot into`,
        );
      }
      return { ...taken, restore: true as const };
    }),
  );
  const taken = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failure = settled.find((s) => s.status === 'rejected');
  try {
    if (failure) throw failure.reason;
    await Promise.all(
      taken.map(async (t) => {
        if (!('restore' in t)) return;
        const guest = await guestClientFor(deps, {
          tenantId,
          claimId: t.claim.id,
          now: nowOf(deps),
        });
        await restoreSnapshot(guest, files, manifest);
      }),
    );
  } catch (err) {
    await files.clear();
    await undo(
      deps,
      tenantId,
      taken,
      idempotency,
      Array.from({ length: n }, (_, i) => scopeOf(i)),
    );
    throw storeErrorToApp(err);
  }
  await files.clear();
  const status = taken.some((t) => t.status === 201) ? 201 : 200;
  if (request.count === undefined) return { status, body: taken[0]!.claim };
  return { status: 201, body: { claims: taken.map((t) => t.claim) } };
}

/** undo releases the claims a failed fork call took and forgets its idempotency keys. */
async function undo(
  deps: SnapshotDeps,
  tenantId: string,
  taken: { claim: Claim; fresh: boolean }[],
  idempotency: Omit<IdempotencyInput, 'body'> | undefined,
  scopes: (string | undefined)[],
) {
  await Promise.all(
    taken
      .filter((t) => t.fresh)
      .map((t) => releaseClaim(deps, tenantId, t.claim.id).catch(() => undefined)),
  );
  if (idempotency)
    await deps.db.idempotencyKey
      .deleteMany({
        where: {
          tenantId,
          key: idempotency.key,
          scope: { in: scopes.filter((s): s is string => s !== undefined) },
        },
      })
      .catch(() => undefined);
}

function fieldError(path: string, message: string) {
  return new AppError('validation_failed', message, {
    issues: [{ location: 'body', path, code: 'custom', message }],
  });
}

export type ClaimOrForkResult =
  { status: 200 | 201 | 202; body: Claim } | { status: 201; body: ClaimBatch };

/**
 * claimOrFork is the one entry of `POST /v1/pools/{name}/claims`: a request without
 * `from_snapshot` is the plain claim path exactly as before (createClaimWithSecrets; one property
 * test more); one with it is a fork (forkClaims). `count` alone is refused: it counts forks.
 */
export async function claimOrFork(
  deps: SnapshotDeps,
  tenantId: string,
  poolName: string,
  request: CreateClaimRequest,
  idempotency?: Omit<IdempotencyInput, 'body'>,
  role: ApiKeyRole = 'admin',
): Promise<ClaimOrForkResult> {
  if (request.from_snapshot === undefined) {
    if (request.count !== undefined)
      throw fieldError('count', '`count` makes forks: it needs `from_snapshot`');
    const { claim, status } = await createClaimWithSecrets(
      deps,
      tenantId,
      poolName,
      request,
      idempotency,
      role,
    );
    return { status, body: claim };
  }
  return forkClaims(
    deps,
    tenantId,
    poolName,
    { ...request, from_snapshot: request.from_snapshot },
    idempotency,
    role,
  );
}
