import type { RunEvent, RunEventType } from '@cubicle/contract/api';
import { encodeRunEventBatch, runEventsChannel } from './run-channels.js';
import type { RunDeps, Sql } from './run-deps.js';

/** NewRunEvent is an event before it has a seq. */
export interface NewRunEvent {
  type: RunEventType;
  data: Record<string, unknown>;
}

/** RunAppend is one run's events for one append. */
export interface RunAppend {
  runId: string;
  events: NewRunEvent[];
}

/**
 * appendRunEvents stores events after the run's last one. The seqs come from the run row's
 * `last_seq`, bumped in the same statement, so concurrent writers (the worker streaming output,
 * an API cancelling, a sweep) serialize on that row and seq stays dense: a reader that has seq k
 * and asks for "after k" never misses one. Run it inside the caller's transaction when the
 * events go with another change of the run. An unknown run stores nothing and gets [].
 */
export async function appendRunEvents(
  sql: Sql,
  runId: string,
  events: NewRunEvent[],
): Promise<RunEvent[]> {
  if (events.length === 0) return [];
  const [stored] = await appendRunEventBatches(sql, [{ runId, events }]);
  return stored ?? [];
}

/**
 * appendRunEventBatches stores several runs' batches in one statement (the worker's group
 * commit: one round trip and one commit for every run with output ready), under the same rule
 * as appendRunEvents; each batch's events come back in the batch's place. A batch must be the
 * only one of its run in the call.
 *
 * Only each batch's base seq and one timestamp come back (not every row): the events are built
 * here from what was sent, so a chunk of output crosses the wire to Postgres once. Their `data`
 * is what the caller gave; a reader of the table gets the same values (jsonb may order keys
 * differently, which JSON readers do not see).
 */
export async function appendRunEventBatches(sql: Sql, batches: RunAppend[]): Promise<RunEvent[][]> {
  const { rows } = await sql.query<{ id: string; base: number; at: Date }>({
    name: 'cubicle_append_run_events_v3',
    // The runs' rows are locked in id order first (the lease renewal's index scan takes them in
    // that order too), so two multi-run writers wait for each other instead of deadlocking.
    text: `WITH input AS (
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
    values: [JSON.stringify(batches.map((b) => ({ run_id: b.runId, events: b.events })))],
  });
  const stored = new Map(rows.map((row) => [row.id, row]));
  return batches.map(({ runId, events }) => {
    const row = stored.get(runId);
    if (!row) return [];
    const createdAt = row.at.toISOString();
    return events.map((e, i) => ({
      run_id: runId,
      seq: row.base + i + 1,
      type: e.type,
      data: e.data,
      created_at: createdAt,
    }));
  });
}

/**
 * publishRunEvents announces committed events to live readers: each batch (the events of one
 * append of one run) as one message, all of them in one Redis write. A lost message costs
 * nothing but latency: readers notice the gap in seq and read it from the database.
 */
export async function publishRunEvents(
  deps: Pick<RunDeps, 'redis' | 'prefix'>,
  ...batches: RunEvent[][]
) {
  const messages = batches.filter((events) => events.length > 0);
  if (messages.length === 0) return;
  const pipeline = deps.redis.pipeline();
  for (const events of messages)
    pipeline.publish(runEventsChannel(deps.prefix, events[0]!.run_id), encodeRunEventBatch(events));
  await pipeline.exec().catch(() => undefined);
}

/** eventBytes is what an event weighs in the bounds on a batch (its text, or a small record). */
export const eventBytes = (event: NewRunEvent) =>
  typeof event.data.text === 'string' ? event.data.text.length : 64;

/** cleanText makes output storable as JSON text: PostgreSQL's jsonb refuses U+0000. */
export const cleanText = (text: string) =>
  text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
