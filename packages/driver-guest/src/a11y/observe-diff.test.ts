import type { ElementRow } from '@cubicle/contract/guest';
import { describe, expect, it } from 'vitest';
import { carryTokens, diffRows, rowDigest } from './observe-diff.js';
import { Snapshot } from './snapshot-store.js';

const fp = (name: string, ancestors: { role: string; name: string }[] = []) => ({
  role: 'push_button',
  name,
  ancestors,
});
const id = (path: string, name: string, ancestors: { role: string; name: string }[] = []) => ({
  ref: { bus: ':1.5', path },
  fingerprint: fp(name, ancestors),
});
const row = (token: string, extra: Partial<ElementRow> = {}): ElementRow => ({
  element_token: token,
  role: 'push_button',
  states: ['showing'],
  actions: ['click'],
  depth: 1,
  ...extra,
});

describe('carryTokens', () => {
  const base = new Snapshot('s1', 7, '/f');
  base.add({ ...id('/a', 'OK'), token: 's1:0' });
  base.add({ ...id('/b', 'Cancel'), token: 's1:1' });
  base.add({ ...id('/c', 'Help', [{ role: 'panel', name: 'Left' }]), token: 's1:2' });

  it('keeps the token of the same object with the same identity, issues new ones otherwise', () => {
    const tokens = carryTokens(base, 's2', [
      id('/a', 'OK'), // same object, same identity
      id('/n', 'New'), // new object
      id('/b', 'Cancel now'), // renamed: a new identity
      id('/c', 'Help', [{ role: 'panel', name: 'Right' }]), // ancestor renamed
    ]);
    expect(tokens).toEqual(['s1:0', 's2:1', 's2:2', 's2:3']);
  });

  it('without a base every token is new, by position', () => {
    expect(carryTokens(undefined, 's3', [id('/a', 'OK'), id('/b', 'Cancel')])).toEqual([
      's3:0',
      's3:1',
    ]);
  });

  it('the same path on another app bus is another object', () => {
    expect(
      carryTokens(base, 's4', [{ ...id('/a', 'OK'), ref: { bus: ':1.9', path: '/a' } }]),
    ).toEqual(['s4:0']);
  });
});

describe('diffRows', () => {
  it('sorts rows into added, changed, removed and counts the unchanged', () => {
    const base = [
      { token: 's1:0', row: row('s1:0', { name: 'OK' }) },
      { token: 's1:1', row: row('s1:1', { name: 'Text', value: 'hello' }) },
      { token: 's1:2', row: row('s1:2', { name: 'Gone' }) },
    ];
    const now = [
      row('s1:0', { name: 'OK' }),
      row('s1:1', { name: 'Text', value: 'hello world' }),
      row('s2:3', { name: 'Fresh' }),
    ];
    expect(diffRows('s1', base, now)).toEqual({
      since: 's1',
      added: [now[2]],
      changed: [now[1]],
      removed: ['s1:2'],
      unchanged_count: 1,
    });
  });

  it('a state, frame, parent or hidden-count change is a change; the screenshot frame is not', () => {
    const was = row('s1:0', { frame: { x: 1, y: 2, w: 3, h: 4 } });
    const same = { ...was, screenshot_frame: { x: 0, y: 0, w: 3, h: 4 } };
    expect(rowDigest(same)).toBe(rowDigest(was));
    for (const now of [
      { ...was, states: ['showing', 'focused'] as ElementRow['states'] },
      { ...was, frame: { x: 1, y: 20, w: 3, h: 4 } },
      { ...was, parent: 's2:9' },
      { ...was, hidden_descendants: 4 },
    ]) {
      expect(diffRows('s1', [{ token: 's1:0', row: was }], [now]).changed).toEqual([now]);
    }
  });

  it('a base row without its row content (never sent) counts as changed, not unchanged', () => {
    const d = diffRows('s1', [{ token: 's1:0' }], [row('s1:0')]);
    expect(d.changed).toHaveLength(1);
    expect(d.unchanged_count).toBe(0);
  });
});
