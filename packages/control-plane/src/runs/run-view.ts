import type { Run, RunEvent } from '@cubicle/contract/api';
import type { RunEventRow, RunRow } from '../repositories/runs-rows.js';

// The contract's view of run rows (the rows and their statements: repositories/runs*.ts).

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** runView is the public shape of a run row. */
export function runView(row: RunRow): Run {
  return {
    id: row.id,
    claim_id: row.claim_id,
    status: row.status,
    argv: row.argv,
    cwd: row.cwd,
    secret_names: row.secret_names,
    timeout_seconds: row.timeout_seconds,
    exit_code: row.exit_code,
    signal: row.signal,
    end_reason: row.end_reason,
    end_detail: row.end_detail,
    last_seq: row.last_seq,
    created_at: row.created_at.toISOString(),
    started_at: iso(row.started_at),
    finished_at: iso(row.finished_at),
  };
}

/** runEventView is the public shape of a run_events row. */
export const runEventView = (row: RunEventRow): RunEvent => ({
  run_id: row.run_id,
  seq: row.seq,
  type: row.type,
  data: row.data,
  created_at: row.created_at.toISOString(),
});
