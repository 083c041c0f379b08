import type { RunEvent, RunEventType } from '@cubicle/contract/api';
import { sqlOf } from '@cubicle/db';
import type { PoolTarget } from '../repositories/pool-target.js';
import { appendRunEventsStatement } from '../repositories/runs-events.js';
import { encodeRunEventBatch, runEventsChannel } from './run-channels.js';
import type { RunDeps } from '../resources.js';

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
 * and asks for "after k" never misses one. Run it inside the caller's transaction (`target`: the
 * connection holding it) when the events go with another change of the run. An unknown run
 * stores nothing and gets [].
 */
export async function appendRunEvents(
  target: PoolTarget,
  runId: string,
  events: NewRunEvent[],
): Promise<RunEvent[]> {
  if (events.length === 0) return [];
  const [stored] = await appendRunEventBatches(target, [{ runId, events }]);
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
export async function appendRunEventBatches(
  target: PoolTarget,
  batches: RunAppend[],
): Promise<RunEvent[][]> {
  const rows = await sqlOf(target).rows(
    appendRunEventsStatement,
    JSON.stringify(batches.map((b) => ({ run_id: b.runId, events: b.events }))),
  );
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
