import { describe, expect, it } from 'vitest';
import { RecordingLine, RecordingStatus } from './recording.js';

const at = '2026-11-29T21:00:00.000Z';

const entry = {
  type: 'action',
  seq: 1,
  at,
  window_id: 7,
  action: { kind: 'element', request: { action: 'click', window_id: 7, element_token: 's2b:3' } },
  before_screenshot: '000001-before.png',
  after_screenshot: '000001-after.png',
  result: {
    effect: 'unverifiable',
    route: 'accessibility',
    delivery: { mode: 'background' },
    retry_safe: false,
    duration_ms: 4,
  },
};

describe('recording', () => {
  it('parses a trajectory: header line, then action lines', () => {
    const jsonl = [
      JSON.stringify({
        type: 'recording',
        recording_id: 'rec_1',
        protocol_version: 'v1',
        started_at: at,
      }),
      JSON.stringify(entry),
    ].join('\n');
    const lines = jsonl.split('\n').map((line) => RecordingLine.parse(JSON.parse(line)));
    expect(lines.map((l) => l.type)).toEqual(['recording', 'action']);
  });

  it('marks secrets emptied from a recorded request', () => {
    const secret = {
      ...entry,
      action: {
        kind: 'element',
        request: { action: 'set_value', window_id: 7, element_token: 's2b:4', value: '' },
      },
      redacted: ['value'],
    };
    expect(RecordingLine.safeParse(secret).success).toBe(true);
    expect(RecordingLine.safeParse({ ...secret, redacted: ['password'] }).success).toBe(false);
    const typed = {
      ...entry,
      action: {
        kind: 'pixel',
        request: {
          action: 'type',
          window_id: 7,
          screenshot_id: 'p1',
          delivery_mode: 'foreground',
          text: '',
        },
      },
      redacted: ['text'],
    };
    expect(RecordingLine.safeParse(typed).success).toBe(true);
    const leaked = { ...typed.action.request, text: 'hunter2' };
    expect(
      RecordingLine.safeParse({
        ...typed,
        action: { kind: 'pixel', request: { ...leaked, action: 'nope' } },
      }).success,
    ).toBe(false);
  });

  it('rejects bad frame names and invalid results', () => {
    expect(RecordingLine.safeParse({ ...entry, before_screenshot: '../x.png' }).success).toBe(
      false,
    );
    expect(
      RecordingLine.safeParse({ ...entry, result: { ...entry.result, effect: 'confirmed' } })
        .success,
    ).toBe(false);
  });

  it('reports status', () => {
    expect(
      RecordingStatus.safeParse({
        recording_id: 'rec_1',
        active: true,
        started_at: at,
        entry_count: 0,
      }).success,
    ).toBe(true);
  });
});
