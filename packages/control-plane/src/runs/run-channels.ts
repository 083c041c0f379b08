import { z } from 'zod';
import { RunEventType, RunId, Timestamp, type RunEvent } from '@cubicle/contract/api';

/** RunRedis (context.ts) is the part of a Redis connection runs need. */
export type { RunRedis } from '../context.js';

/** Each run's events are published (after they are committed) on a channel of its own. */
export const runEventsChannel = (prefix: string, runId: string) => `${prefix}:run-events:${runId}`;
/** Workers listen here for "this run has input waiting" (message: the run id). */
export const runControlChannel = (prefix: string) => `${prefix}:run-control`;
/** The run's pending input, oldest first. */
export const runInputKey = (prefix: string, runId: string) => `${prefix}:run-input:${runId}`;
/** Input left for a run that never reads it expires with it. */
export const RUN_INPUT_TTL_SECONDS = 86_400;

/** RunInput is one item of a run's input list. */
export const RunInput = z.discriminatedUnion('type', [
  z.object({ type: z.literal('stdin'), data: z.string(), encoding: z.enum(['utf8', 'base64']) }),
  z.object({ type: z.literal('stdin_end') }),
  z.object({ type: z.literal('cancel'), grace_ms: z.int().min(0) }),
]);
export type RunInput = z.infer<typeof RunInput>;

/**
 * RunEventBatch is a published message: the events of one commit, in seq order. What they share
 * (run, commit time, consecutive seqs) is written once, so a reader checks the run id and the
 * timestamp once per commit and each event's type and data, not every field of every event: at
 * tens of thousands of events a second that difference is most of the API's work.
 */
export const RunEventBatch = z.strictObject({
  run_id: RunId,
  first_seq: z.int().min(1),
  created_at: Timestamp,
  events: z
    .array(z.strictObject({ type: RunEventType, data: z.record(z.string(), z.unknown()) }))
    .min(1),
});
export type RunEventBatch = z.infer<typeof RunEventBatch>;

/**
 * encodeRunEventBatch writes the events of one append (appendRunEvents: one run, one commit time,
 * consecutive seqs) as a RunEventBatch message; anything else is a programming error.
 */
export function encodeRunEventBatch(events: RunEvent[]): string {
  const first = events[0]!;
  const batch: RunEventBatch = {
    run_id: first.run_id,
    first_seq: first.seq,
    created_at: first.created_at,
    events: events.map((e, i) => {
      if (e.run_id !== first.run_id || e.created_at !== first.created_at || e.seq !== first.seq + i)
        throw new Error('a run event batch is the events of one append');
      return { type: e.type, data: e.data };
    }),
  };
  return JSON.stringify(batch);
}

/** The batch's own fields, checked once per message; its events are checked by hand below. */
const RunEventBatchHead = RunEventBatch.extend({ events: z.array(z.unknown()).min(1) });
const eventTypes = new Set<string>(RunEventType.options);

/** isPlainRecord: what z.record accepts of JSON, an object that is not an array. */
const isPlainRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * decodeRunEventBatch parses a published message back into RunEvents; throws on a bad one. It
 * accepts exactly what RunEventBatch does, but reads each event's two fields by hand: with the
 * schema's parse per event (which also copies every `data`), the API's follower spent half of
 * its decoding in zod at tens of thousands of events a second.
 */
export function decodeRunEventBatch(message: string): RunEvent[] {
  const batch = RunEventBatchHead.parse(JSON.parse(message));
  return batch.events.map((event, i) => {
    if (
      !isPlainRecord(event) ||
      Object.keys(event).length !== 2 ||
      typeof event.type !== 'string' ||
      !eventTypes.has(event.type) ||
      !isPlainRecord(event.data)
    )
      throw new Error(`run event batch: event ${i} is not {type, data}`);
    return {
      run_id: batch.run_id,
      seq: batch.first_seq + i,
      type: event.type as RunEventType,
      data: event.data,
      created_at: batch.created_at,
    };
  });
}
