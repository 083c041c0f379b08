import type { RunEvent } from '@cubicle/contract/api';
import { describe, expect, it } from 'vitest';
import { decodeRunEventBatch, encodeRunEventBatch, RunEventBatch } from './run-channels.js';

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

  it('accepts exactly what the RunEventBatch schema accepts, event by event', () => {
    const good = JSON.parse(encodeRunEventBatch(events));
    const variants: unknown[] = [
      good,
      { ...good, events: [] },
      { ...good, extra: 1 },
      { ...good, first_seq: 0 },
      { ...good, first_seq: 1.5 },
      { ...good, created_at: 'yesterday' },
      { ...good, events: [{ type: 'stdout', data: { text: 'x' }, seq: 3 }] },
      { ...good, events: [{ type: 'stdout' }] },
      { ...good, events: [{ type: 'stdout', data: ['x'] }] },
      { ...good, events: [{ type: 'stdout', data: null }] },
      { ...good, events: [{ type: 'stdout', data: 'x' }] },
      { ...good, events: [{ type: 7, data: {} }] },
      { ...good, events: [null] },
      { ...good, events: [['stdout', {}]] },
      { ...good, events: [{ type: 'log', data: { nested: { a: [1] } } }] },
    ];
    for (const variant of variants) {
      const text = JSON.stringify(variant);
      const bySchema = RunEventBatch.safeParse(JSON.parse(text)).success;
      let decoded = true;
      try {
        decodeRunEventBatch(text);
      } catch {
        decoded = false;
      }
      expect({ text, decoded }).toEqual({ text, decoded: bySchema });
    }
  });
});
