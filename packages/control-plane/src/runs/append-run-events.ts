import type { RunEvent, RunEventType } from '@cubicle/contract/api';
import { encodeRunEventBatch, runEventsChannel } from './run-channels.js';
import type { RunDeps, Sql } from './run-deps.js';

/** NewRunEvent is an event before it has a seq. */
export interface NewRunEvent {
  type: RunEventType;
  data: Record<string, unknown>;
}

/**
 * appendRunEvents stores events after the run's last one. The seqs come from the run row's
 * `last_seq`, bumped in the same statement, so concurrent writers (the worker streaming output,
 * an API cancelling, a sweep) serialize on that row and seq stays dense: a reader that has seq k
 * and asks for "after k" never misses one. Run it inside the caller's transaction when the
 * events go with another change of the run.
 *
 * Only the batch's base seq and its one timestamp come back (not every row): the events are
 * built here from what was sent, so a chunk of output crosses the wire to Postgres once. Their
 * `data` is what the caller gave; a reader of the table gets the same values (jsonb may order
 * keys differently, which JSON readers do not see). An unknown run stores nothing and gets [].
 */
export async function appendRunEvents(
  sql: Sql,
  runId: string,
  events: NewRunEvent[],
): Promise<RunEvent[]> {
  if (events.length === 0) return [];
  const { rows } = await sql.query<{ base: number; at: Date }>({
    name: 'cubicle_append_run_events_v2',
    text: `WITH r AS (
             UPDATE runs SET last_seq = last_seq + $2 WHERE id = $1
             RETURNING tenant_id, last_seq - $2 AS base, clock_timestamp()::timestamptz(3) AS at),
           ins AS (
             INSERT INTO run_events (tenant_id, run_id, seq, type, data, created_at)
             SELECT r.tenant_id, $1, r.base + e.ord, e.ev->>'type', e.ev->'data', r.at
             FROM r, jsonb_array_elements($3::jsonb) WITH ORDINALITY AS e(ev, ord))
           SELECT base, at FROM r`,
    values: [runId, events.length, JSON.stringify(events)],
  });
  const row = rows[0];
  if (!row) return [];
  const createdAt = row.at.toISOString();
  return events.map((e, i) => ({
    run_id: runId,
    seq: row.base + i + 1,
    type: e.type,
    data: e.data,
    created_at: createdAt,
  }));
}

/**
 * publishRunEvents announces committed events to live readers. A lost message costs nothing
 * but latency: readers notice the gap in seq and read it from the database.
 */
export async function publishRunEvents(
  deps: Pick<RunDeps, 'redis' | 'prefix'>,
  events: RunEvent[],
) {
  const first = events[0];
  if (!first) return;
  await deps.redis
    .publish(runEventsChannel(deps.prefix, first.run_id), encodeRunEventBatch(events))
    .catch(() => undefined);
}

/** cleanText makes output storable as JSON text: PostgreSQL's jsonb refuses U+0000. */
export const cleanText = (text: string) =>
  text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
