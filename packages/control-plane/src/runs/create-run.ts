import { AppError } from '@cubicle/contract/errors';
import type { CreateRunRequest, Run } from '@cubicle/contract/api';
import { newId, sqlOf } from '@cubicle/db';
import { nowOf } from '../context.js';
import { isClaimLive, whyClaimIsNotLive } from '../lifecycle/claim-liveness.js';
import { IDEMPOTENCY_TTL_MS, idempotencyHashKey, requestHash } from '../idempotency/idempotency.js';
import { inPgTransaction } from '../repositories/pg-transaction.js';
import {
  deleteExpiredRunIdempotencyKey,
  insertRunIdempotencyKey,
  selectRunIdempotencyKey,
} from '../repositories/runs-idempotency.js';
import { insertRun, selectRun, selectRunClaim } from '../repositories/runs.js';
import type { ApiKeyRole } from '../secrets/usable-by.js';
import { assertNoActiveHandoff } from '../handoffs/handoff-guard.js';
import { appendRunEvents, publishRunEvents } from './append-run-events.js';
import type { RunDeps } from '../resources.js';
import { checkRunSecretNames } from './run-secrets.js';
import { runView } from './run-view.js';

/**
 * activeClaimOf checks that the tenant's claim exists (else 404) and is active and unexpired
 * (else 409 claim_not_active).
 */
export async function activeClaimOf(deps: RunDeps, tenantId: string, claimId: string) {
  const found = await sqlOf(deps.db).row(selectRunClaim, claimId, tenantId);
  if (!found) throw new AppError('not_found', 'no such claim');
  const claim = { status: found.status, expiresAt: found.expires_at };
  if (!isClaimLive(claim, nowOf(deps)))
    throw new AppError('claim_not_active', `the claim is ${whyClaimIsNotLive(claim)}`);
  // A human holds the desktop: no new program starts in it until the handoff ends.
  await assertNoActiveHandoff(deps.db, claimId);
}

/**
 * createRun records a queued run of an active claim and asks a worker to start it. The run row,
 * its first event (`status: queued`) and the idempotency key commit together, so a retry with
 * the same key and body gets the same run — also after an API restart — and a different body
 * is 409 `idempotency_key_reused`. Secret names are checked first: an unknown one is 400, a stored
 * one the caller's `role` may not use is 403 `secret_not_usable`, and nothing is stored. The worker starts the run (see executeRun); 202 does not wait for it.
 */
export async function createRun(
  deps: RunDeps,
  tenantId: string,
  claimId: string,
  request: CreateRunRequest,
  idempotencyKey?: string,
  role: ApiKeyRole = 'admin',
): Promise<Run> {
  await activeClaimOf(deps, tenantId, claimId);
  const names = [...new Set(request.secrets)];
  await checkRunSecretNames(deps.db, tenantId, claimId, names, role);
  const scope = `POST /v1/claims/${claimId}/runs`;
  const hash = idempotencyKey
    ? requestHash(request, deps.keyring ? idempotencyHashKey(deps.keyring) : undefined)
    : '';
  const runId = newId('run');
  const stored = await inPgTransaction(deps.db, async (client, rollback) => {
    if (idempotencyKey) {
      const now = new Date();
      const inserted = await sqlOf(client).exec(
        insertRunIdempotencyKey,
        newId('idempotency_key'),
        tenantId,
        idempotencyKey,
        scope,
        hash,
        runId,
        now,
        new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
      );
      if (inserted === 0) {
        rollback();
        return null;
      }
    }
    const row = await sqlOf(client).row(
      insertRun,
      runId,
      tenantId,
      claimId,
      request.argv,
      request.cwd ?? null,
      JSON.stringify(request.env),
      names,
      request.timeout_seconds,
    );
    const events = await appendRunEvents(client, runId, [
      { type: 'status', data: { status: 'queued' } },
    ]);
    return { row: row!, events };
  });
  // The key was there first: this is a retry (or a reuse) of an earlier request.
  if (!stored) return replay(deps, tenantId, claimId, scope, idempotencyKey!, hash, request, role);
  const { row, events } = stored;
  await publishRunEvents(deps, events);
  await deps.queues.enqueue(
    'run.execute',
    { tenant_id: tenantId, run_id: runId },
    { jobId: runId },
  );
  return runView({ ...row, last_seq: 1 });
}

/** replay answers a retried create: the same run, or 409 when the key came with another body. */
async function replay(
  deps: RunDeps,
  tenantId: string,
  claimId: string,
  scope: string,
  key: string,
  hash: string,
  request: CreateRunRequest,
  role: ApiKeyRole,
): Promise<Run> {
  const found = await sqlOf(deps.db).row(selectRunIdempotencyKey, tenantId, scope, key);
  if (!found || found.expires_at.getTime() <= Date.now()) {
    // An expired key is forgotten; the request is new.
    if (found) await sqlOf(deps.db).exec(deleteExpiredRunIdempotencyKey, found.id);
    return createRun(deps, tenantId, claimId, request, key, role);
  }
  if (found.request_hash !== hash)
    throw new AppError(
      'idempotency_key_reused',
      'this Idempotency-Key was used with a different request body',
    );
  const run = found.resource_id
    ? await sqlOf(deps.db).row(selectRun, found.resource_id, tenantId)
    : undefined;
  if (!run)
    throw new AppError('idempotency_in_progress', 'the first request with this key is not done');
  return runView(run);
}
