import type { RunEndReason, RunEventType, RunStatus } from '@cubicle/contract/api';

/** RunRow is a `runs` row as node-postgres returns it (snake_case columns). */
export interface RunRow {
  id: string;
  tenant_id: string;
  claim_id: string;
  status: RunStatus;
  argv: string[];
  cwd: string | null;
  env: Record<string, string>;
  secret_names: string[];
  timeout_seconds: number;
  exit_code: number | null;
  signal: string | null;
  end_reason: RunEndReason | null;
  end_detail: string | null;
  last_seq: number;
  worker_id: string | null;
  lease_expires_at: Date | null;
  cancel_requested_at: Date | null;
  cancel_grace_ms: number | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

/** The columns every run statement selects (never `env`'s values in a view: they may be private). */
export const RUN_COLUMNS = `id, tenant_id, claim_id, status, argv, cwd, env, secret_names, timeout_seconds,
  exit_code, signal, end_reason, end_detail, last_seq, worker_id, lease_expires_at,
  cancel_requested_at, cancel_grace_ms, created_at, started_at, finished_at`;

/** RunEventRow is a `run_events` row as selected for readers. */
export interface RunEventRow {
  run_id: string;
  seq: number;
  type: RunEventType;
  data: Record<string, unknown>;
  created_at: Date;
}
