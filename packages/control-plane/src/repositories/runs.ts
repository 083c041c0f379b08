import type { RunEndReason, RunStatus } from '@cubicle/contract/api';
import { statement } from '@cubicle/db';
import { RUN_COLUMNS, type RunRow } from './runs-rows.js';

// The `runs` table's statements. Every one runs on node-postgres (the pool, or a connection
// holding a transaction: inPgTransaction), so rows decode the pg way (RunRow).

/** The tenant's run. */
export const selectRun = statement<RunRow, [runId: string, tenantId: string]>(
  'cubicle_get_run_v1',
  `SELECT ${RUN_COLUMNS} FROM runs WHERE id = $1 AND tenant_id = $2`,
);

/** One page of a claim's runs, newest first: ids below the cursor (null: from the newest). */
export const selectClaimRuns = statement<
  RunRow,
  [claimId: string, tenantId: string, cursor: string | null, limit: number]
>(
  'cubicle_claim_runs_v1',
  `SELECT ${RUN_COLUMNS} FROM runs
   WHERE claim_id = $1 AND tenant_id = $2 AND ($3::text IS NULL OR id < $3)
   ORDER BY id DESC LIMIT $4`,
);

/** One page of the tenant's runs across claims, newest first, optionally of one status. */
export const selectTenantRuns = statement<
  RunRow,
  [tenantId: string, cursor: string | null, status: string | null, limit: number]
>(
  'cubicle_tenant_runs_v1',
  `SELECT ${RUN_COLUMNS} FROM runs
   WHERE tenant_id = $1 AND ($2::text IS NULL OR id < $2)
     AND ($3::text IS NULL OR status::text = $3)
   ORDER BY id DESC LIMIT $4`,
);

/** Records a cancel request of a run not ended (the first request's time and grace stay). */
export const requestRunCancel = statement<
  RunRow,
  [runId: string, tenantId: string, graceMs: number]
>(
  'cubicle_cancel_run_v1',
  `UPDATE runs SET cancel_requested_at = coalesce(cancel_requested_at, clock_timestamp()),
     cancel_grace_ms = coalesce(cancel_grace_ms, $3)
   WHERE id = $1 AND tenant_id = $2 AND status IN ('queued', 'running')
   RETURNING ${RUN_COLUMNS}`,
);

/** A queued run, as run creation stores it. */
export const insertRun = statement<
  RunRow,
  [
    id: string,
    tenantId: string,
    claimId: string,
    argv: string[],
    cwd: string | null,
    envJson: string,
    secretNames: string[],
    timeoutSeconds: number,
  ]
>(
  'cubicle_insert_run_v1',
  `INSERT INTO runs (id, tenant_id, claim_id, status, argv, cwd, env, secret_names,
     timeout_seconds, created_at)
   VALUES ($1, $2, $3, 'queued', $4, $5, $6::jsonb, $7, $8, clock_timestamp())
   RETURNING ${RUN_COLUMNS}`,
);

/** FinishRunParams: run id, final status, reason, detail, exit code, signal. */
type FinishRunParams = [
  runId: string,
  status: RunStatus,
  reason: RunEndReason,
  detail: string | null,
  exitCode: number | null,
  signal: string | null,
];

const finishRunText = (guard: string) =>
  `UPDATE runs SET status = $2::run_status, end_reason = $3, end_detail = $4,
     exit_code = $5, signal = $6, finished_at = clock_timestamp(),
     worker_id = NULL, lease_expires_at = NULL
   WHERE id = $1 AND status IN ('queued', 'running')
     ${guard}
   RETURNING ${RUN_COLUMNS}`;

/**
 * Ends a run not ended yet: unconditionally (`none`), or only once its holder's lease lapsed
 * (`lease_expired`, the lost-worker sweep).
 */
export const finishRunStatements = {
  none: statement<RunRow, FinishRunParams>('cubicle_finish_run_none_v1', finishRunText('')),
  lease_expired: statement<RunRow, FinishRunParams>(
    'cubicle_finish_run_lease_expired_v1',
    finishRunText('AND lease_expires_at < clock_timestamp()'),
  ),
} as const;

/** A worker takes a queued run nobody holds, under a lease of `leaseMs`. */
export const takeRun = statement<
  RunRow,
  [runId: string, tenantId: string, workerId: string, leaseMs: number]
>(
  'cubicle_take_run_v1',
  `UPDATE runs SET worker_id = $3,
     lease_expires_at = clock_timestamp() + $4 * interval '1 millisecond'
   WHERE id = $1 AND tenant_id = $2 AND status = 'queued' AND worker_id IS NULL
   RETURNING ${RUN_COLUMNS}`,
);

/** The worker's run is running (only while it is still queued and this worker's). */
export const markRunStarted = statement<{ id: string }, [runId: string, workerId: string]>(
  'cubicle_run_started_v1',
  `UPDATE runs SET status = 'running', started_at = clock_timestamp()
   WHERE id = $1 AND status = 'queued' AND worker_id = $2 RETURNING id`,
);

/** A held run's renewal: its cancel request and its claim's state, to act on. */
export interface RenewedRunRow {
  id: string;
  cancel_requested_at: Date | null;
  cancel_grace_ms: number | null;
  claim_status: string;
  release_reason: string | null;
  expires_at: Date;
}

/** Renews the leases of a worker's runs; a run it no longer holds does not come back. */
export const renewRunLeases = statement<
  RenewedRunRow,
  [runIds: string[], workerId: string, leaseMs: number]
>(
  'cubicle_renew_runs_v1',
  `UPDATE runs r SET lease_expires_at = clock_timestamp() + $3 * interval '1 millisecond'
   FROM claims c
   WHERE r.id = ANY($1) AND r.worker_id = $2 AND c.id = r.claim_id
   RETURNING r.id, r.cancel_requested_at, r.cancel_grace_ms, c.status::text AS claim_status,
     c.release_reason::text AS release_reason, c.expires_at`,
);

/** Runs not ended whose holder's lease lapsed (at most 100 a sweep). */
export const selectLostRuns = statement<{ id: string }, []>(
  'cubicle_lost_runs_v1',
  `SELECT id FROM runs WHERE status IN ('queued', 'running')
   AND lease_expires_at < clock_timestamp() LIMIT 100`,
);

/** Queued runs no worker took within `afterMs` (a lost enqueue; at most 100 a sweep). */
export const selectOrphanRuns = statement<{ id: string; tenant_id: string }, [afterMs: number]>(
  'cubicle_orphan_runs_v1',
  `SELECT id, tenant_id FROM runs WHERE status = 'queued' AND worker_id IS NULL
   AND created_at < clock_timestamp() - $1 * interval '1 millisecond' LIMIT 100`,
);

/** The claim a run is asked for: its state, for the liveness rule (lifecycle/claim-liveness). */
export const selectRunClaim = statement<
  { status: string; expires_at: Date },
  [claimId: string, tenantId: string]
>('cubicle_run_claim_v1', 'SELECT status, expires_at FROM claims WHERE id = $1 AND tenant_id = $2');
