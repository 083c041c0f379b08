import { TimelineEntry, type TimelineEntry as Entry } from '@cubicle/contract/api';
import { describe, expect, it } from 'vitest';
import { actionEntry, cutText, decodeCursor, pageOf, placed } from './timeline-entries.js';

const origin = new Date('2026-12-10T10:00:00.000Z');
const claimEntry = (ms: number, id: string): Entry => ({
  kind: 'claim',
  ...placed('claim', id, new Date(origin.getTime() + ms), origin),
  event: 'claimed',
  reason: null,
});

describe('actionEntry', () => {
  it('places a stored ActionResult on the video clock with its effect, evidence and element', () => {
    const entry = actionEntry(
      {
        id: 'act_01jzzzzzzzzzzzzzzzzzzzzzzz',
        operation: 'act.element',
        request: { action: 'set_value', element_token: 'e1', value: '[redacted]' },
        result: {
          effect: 'confirmed',
          route: 'accessibility',
          retry_safe: false,
          duration_ms: 12,
          delivery: { mode: 'background' },
          evidence: [
            { kind: 'value_readback', before: '', after: '[secret:TOKEN]' },
            {
              kind: 'a11y_event',
              event: 'object:text-changed',
              role: 'entry',
              name: 'Password',
              after_ms: 3,
            },
          ],
        },
        durationMs: 12,
        createdAt: new Date(origin.getTime() + 1500),
      },
      origin,
    );
    expect(TimelineEntry.parse(entry)).toEqual(entry);
    expect(entry).toMatchObject({
      kind: 'action',
      offset_ms: 1500,
      action: 'set_value',
      effect: 'confirmed',
      element: { role: 'entry', name: 'Password' },
      evidence: [
        'value_readback: "" → "[secret:TOKEN]"',
        expect.stringContaining('on entry "Password"'),
      ],
      error_code: null,
    });
  });

  it('names a refusal by its error code', () => {
    const entry = actionEntry(
      {
        id: 'act_01jzzzzzzzzzzzzzzzzzzzzzzy',
        operation: 'act.pixel',
        request: { action: 'click' },
        result: {
          effect: 'refused',
          route: 'xtest',
          retry_safe: true,
          duration_ms: 1,
          error: { code: 'target_stale', hint: 'observe again' },
        },
        durationMs: 1,
        createdAt: origin,
      },
      origin,
    );
    expect(entry).toMatchObject({ effect: 'refused', error_code: 'target_stale', evidence: [] });
  });
});

describe('pageOf', () => {
  it('pages in instant-then-key order and resumes after the cursor without repeats or gaps', () => {
    const all = [
      claimEntry(30, 'c'),
      claimEntry(10, 'b'),
      claimEntry(10, 'a'),
      claimEntry(20, 'd'),
    ];
    const first = pageOf(all, null, 2);
    expect(first.data.map((e) => e.key)).toEqual(['claim:a', 'claim:b']);
    const cursor = decodeCursor(first.next_cursor!);
    const second = pageOf(all, cursor, 2);
    expect(second.data.map((e) => e.key)).toEqual(['claim:d', 'claim:c']);
    expect(second.next_cursor).toBeNull();
  });

  it('refuses a cursor it never made', () => {
    expect(decodeCursor('bm90LWpzb24')).toBeNull();
    expect(decodeCursor('!!')).toBeNull();
  });
});

describe('cutText', () => {
  it('bounds a long output line and says so', () => {
    expect(cutText('x'.repeat(5000))).toMatchObject({ is_truncated: true });
    expect(cutText('short')).toEqual({ text: 'short', is_truncated: false });
  });
});
