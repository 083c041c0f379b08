import type { RunEvent } from '@cubicle/contract/api';
import { describe, expect, it } from 'vitest';
import { decodeRunEventBatch, encodeRunEventBatch } from './run-channels.js';

const run = 'run_01h00000000000000000000000';
const at = '2026-12-01T11:00:00.123Z';
const events: RunEvent[] = [
  { run_id: run, seq: 7, type: 'stdout', data: { text: 'a\n' }, created_at: at },
  { run_id: run, seq: 8, type: 'stderr', data: { text: 'b\n' }, created_at: at },
  { run_id: run, seq: 9, type: 'status', data: { status: 'succeeded' }, created_at: at },
];

describe('run event batches on the wire', () => {
  it('round-trips the events of one append, seq and time included', () => {
    expect(decodeRunEventBatch(encodeRunEventBatch(events))).toEqual(events);
  });

  it('refuses to encode events that are not one append (a gap in seq, another run)', () => {
    expect(() => encodeRunEventBatch([events[0]!, events[2]!])).toThrow(/one append/);
    expect(() =>
      encodeRunEventBatch([events[0]!, { ...events[1]!, run_id: `${run.slice(0, -1)}1` }]),
    ).toThrow(/one append/);
  });

  it('rejects a message that is not a batch (an unknown event type, a bad run id)', () => {
    const good = JSON.parse(encodeRunEventBatch(events));
    expect(() =>
      decodeRunEventBatch(JSON.stringify({ ...good, events: [{ type: 'nope', data: {} }] })),
    ).toThrow();
    expect(() => decodeRunEventBatch(JSON.stringify({ ...good, run_id: 'clm_1' }))).toThrow();
    expect(() => decodeRunEventBatch('[1,2')).toThrow();
  });
});
