import { statement } from '@cubicle/db';
import type { RunEventRow } from './runs-rows.js';

// The `run_events` table's statements (node-postgres targets: the pool or a pg transaction).

/**
 * Events after a seq, in seq order. `$2::bigint`: the cursor may be any safe integer (after_seq
 * up to 2^53−1), past the integer column; as an int4 parameter 2^31 failed the statement.
 */
export const selectRunEvents = statement<
  RunEventRow,
  [runId: string, afterSeq: number, limit: number]
>(
  'cubicle_read_run_events_v2',
  `SELECT run_id, seq, type, data, created_at FROM run_events
   WHERE run_id = $1 AND seq > $2::bigint ORDER BY seq LIMIT $3`,
);

/** One run's batch as appendRunEvents sends it: `{run_id, events: [{type, data}]}`. */
export interface AppendedRunRow {
  id: string;
  /** The run's last seq before this batch (the batch's events follow it). */
  base: number;
  at: Date;
}

/**
 * Appends several runs' batches (a JSON array of `{run_id, events}`) after each run's last seq,
 * bumping `runs.last_seq` in the same statement, so concurrent writers serialize on the run row
 * and seqs stay dense. Only each run's base seq and one timestamp come back.
 *
 * The runs' rows are locked in id order first (the lease renewal's index scan takes them in
 * that order too), so two multi-run writers wait for each other instead of deadlocking.
 */
export const appendRunEventsStatement = statement<AppendedRunRow, [batchesJson: string]>(
  'cubicle_append_run_events_v3',
  `WITH input AS (
     SELECT b.run_id, b.events, jsonb_array_length(b.events) AS n
     FROM jsonb_to_recordset($1::jsonb) AS b(run_id text, events jsonb)),
   locked AS MATERIALIZED (
     SELECT runs.id FROM runs JOIN input ON input.run_id = runs.id
     ORDER BY runs.id FOR NO KEY UPDATE OF runs),
   r AS (
     UPDATE runs SET last_seq = runs.last_seq + input.n
     FROM input, locked WHERE runs.id = input.run_id AND locked.id = runs.id
     RETURNING runs.id, runs.tenant_id, runs.last_seq - input.n AS base,
               clock_timestamp()::timestamptz(3) AS at),
   ins AS (
     INSERT INTO run_events (tenant_id, run_id, seq, type, data, created_at)
     SELECT r.tenant_id, r.id, r.base + e.ord, e.ev->>'type', e.ev->'data', r.at
     FROM r JOIN input ON input.run_id = r.id,
          jsonb_array_elements(input.events) WITH ORDINALITY AS e(ev, ord))
   SELECT id, base, at FROM r`,
);
