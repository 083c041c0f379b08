import { describe, expect, it } from 'vitest';
import { ElementRow, ElementToken, SnapshotId } from './element.js';

const row = {
  element_token: 's2a:14',
  role: 'text',
  name: 'Memo',
  states: ['enabled', 'sensitive', 'editable', 'showing', 'visible'],
  actions: ['set_value', 'type_text', 'focus'],
  frame: { x: -4, y: 120, w: 200, h: 28 },
  screenshot_frame: { x: 0, y: 90, w: 200, h: 28 },
  depth: 3,
  parent: 's2a:9',
};

describe('element tokens', () => {
  it('accepts s<snapshot>:<n>', () => {
    for (const token of ['s0000002a:14', 's1:0', 'sAbC9:123']) {
      expect(ElementToken.safeParse(token).success).toBe(true);
    }
  });

  it('rejects bare, malformed and overlong tokens', () => {
    for (const token of [
      'e4',
      '@e4',
      's:1',
      's1:',
      's1:x',
      's-1:2',
      'S1:2',
      ' s1:2',
      's1:2 ',
      `s${'a'.repeat(60)}:1`,
    ]) {
      expect(ElementToken.safeParse(token).success).toBe(false);
    }
  });

  it('snapshot ids are the token prefix', () => {
    expect(SnapshotId.safeParse('s0000002a').success).toBe(true);
    expect(SnapshotId.safeParse('s0000002a:1').success).toBe(false);
  });
});

describe('ElementRow', () => {
  it('accepts a row with a value, and one without any', () => {
    expect(ElementRow.safeParse({ ...row, value: 'hello' }).success).toBe(true);
    expect(ElementRow.safeParse(row).success).toBe(true);
  });

  it('never carries a value for a secure field', () => {
    const secure = { ...row, role: 'password_text', redacted: true };
    expect(ElementRow.safeParse(secure).success).toBe(true);
    expect(ElementRow.safeParse({ ...secure, value: 'hunter2' }).success).toBe(false);
    expect(ElementRow.safeParse({ ...secure, redacted: false }).success).toBe(false);
  });

  it('separates unknown from absent with `unreadable`', () => {
    const { name: _name, ...nameless } = row;
    expect(ElementRow.safeParse({ ...nameless, unreadable: ['name'] }).success).toBe(true);
    expect(ElementRow.safeParse({ ...row, unreadable: [] }).success).toBe(false);
  });

  it('rejects unknown states, actions and fields', () => {
    expect(ElementRow.safeParse({ ...row, states: ['secure'] }).success).toBe(false);
    expect(ElementRow.safeParse({ ...row, actions: ['double_click'] }).success).toBe(false);
    expect(ElementRow.safeParse({ ...row, label: 'Memo' }).success).toBe(false);
    expect(ElementRow.safeParse({ ...row, role: 'Push Button' }).success).toBe(false);
  });
});
