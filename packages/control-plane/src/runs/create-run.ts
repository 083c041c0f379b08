import { AppError } from '@cubicle/contract/errors';
import type { CreateRunRequest, Run } from '@cubicle/contract/api';
import { newId, sqlPoolOf } from '@cubicle/db';
import { nowOf } from '../context.js';
import { isClaimLive, whyClaimIsNotLive } from '../lifecycle/claim-liveness.js';
import { IDEMPOTENCY_TTL_MS, idempotencyHashKey, requestHash } from '../idempotency/idempotency.js';
import type { ApiKeyRole } from '../secrets/usable-by.js';
import { appendRunEvents, publishRunEvents } from './append-run-events.js';
import type { RunDeps } from './run-deps.js';
import { checkRunSecretNames } from './run-secrets.js';
import { RUN_COLUMNS, runView, type RunRow } from './run-view.js';

/**
 * activeClaimOf checks that the tenant's claim exists (else 404) and is active and unexpired
 * (else 409 claim_not_active).
 */
export async function activeClaimOf(deps: RunDeps, tenantId: string, claimId: string) {
  const { rows } = await sqlPoolOf(deps.db).query<{ status: string; expires_at: Date }>({
    name: 'cubicle_run_claim_v1',
    text: 'SELECT status, expires_at FROM claims WHERE id = $1 AND tenant_id = $2',
    values: [claimId, tenantId],
  });
  const found = rows[0];
  if (!found) throw new AppError('not_found', 'no such claim');
  const claim = { status: found.status, expiresAt: found.expires_at };
  if (!isClaimLive(claim, nowOf(deps)))
    throw new AppError('claim_not_active', `the claim is ${whyClaimIsNotLive(claim)}`);
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
  const client = await sqlPoolOf(deps.db).connect();
  let row: RunRow | undefined;
  let events;
  try {
    await client.query('BEGIN');
    if (idempotencyKey) {
      const now = new Date();
      const { rowCount } = await client.query({
        name: 'cubicle_run_idempotency_v1',
        text: `INSERT INTO idempotency_keys (id, tenant_id, key, scope, request_hash, response_status,
                 resource_id, created_at, completed_at, expires_at)
               VALUES ($1, $2, $3, $4, $5, 202, $6, $7, $7, $8)
               ON CONFLICT (tenant_id, scope, key) DO NOTHING`,
        values: [
          newId('idempotency_key'),
          tenantId,
          idempotencyKey,
          scope,
          hash,
          runId,
          now,
          new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
        ],
      });
      if (rowCount === 0) {
        await client.query('ROLLBACK');
        return await replay(deps, tenantId, claimId, scope, idempotencyKey, hash, request, role);
      }
    }
    ({
      rows: [row],
    } = await client.query<RunRow>({
      name: 'cubicle_insert_run_v1',
      text: `INSERT INTO runs (id, tenant_id, claim_id, status, argv, cwd, env, secret_names,
               timeout_seconds, created_at)
             VALUES ($1, $2, $3, 'queued', $4, $5, $6::jsonb, $7, $8, clock_timestamp())
             RETURNING ${RUN_COLUMNS}`,
      values: [
        runId,
        tenantId,
        claimId,
        request.argv,
        request.cwd ?? null,
        JSON.stringify(request.env),
        names,
        request.timeout_seconds,
      ],
    }));
    events = await appendRunEvents(client, runId, [{ type: 'status', data: { status: 'queued' } }]);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
  await publishRunEvents(deps, events);
  await deps.queues.enqueue(
    'run.execute',
    { tenant_id: tenantId, run_id: runId },
    { jobId: runId },
  );
  return runView({ ...row!, last_seq: 1 });
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
  const { rows } = await sqlPoolOf(deps.db).query<{
    id: string;
    request_hash: string;
    resource_id: string | null;
    expires_at: Date;
  }>({
    name: 'cubicle_run_idempotency_get_v1',
    text: `SELECT id, request_hash, resource_id, expires_at FROM idempotency_keys
           WHERE tenant_id = $1 AND scope = $2 AND key = $3`,
    values: [tenantId, scope, key],
  });
  const found = rows[0];
  if (!found || found.expires_at.getTime() <= Date.now()) {
    // An expired key is forgotten; the request is new.
    if (found)
      await sqlPoolOf(deps.db).query(
        'DELETE FROM idempotency_keys WHERE id = $1 AND expires_at <= now()',
        [found.id],
      );
    return createRun(deps, tenantId, claimId, request, key, role);
  }
  if (found.request_hash !== hash)
    throw new AppError(
      'idempotency_key_reused',
      'this Idempotency-Key was used with a different request body',
    );
  const { rows: runs } = await sqlPoolOf(deps.db).query<RunRow>(
    `SELECT ${RUN_COLUMNS} FROM runs WHERE id = $1 AND tenant_id = $2`,
    [found.resource_id, tenantId],
  );
  if (!runs[0])
    throw new AppError('idempotency_in_progress', 'the first request with this key is not done');
  return runView(runs[0]);
}
