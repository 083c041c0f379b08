import { describe, expect, it } from 'vitest';
import { SnapshotStore } from './snapshot-store.js';

const binding = (path: string) => ({
  ref: { bus: ':1.5', path },
  fingerprint: { role: 'push_button', name: 'OK', ancestors: [] },
});

describe('SnapshotStore', () => {
  it('a new observe of a window invalidates only that window’s older snapshot', () => {
    const store = new SnapshotStore();
    const a1 = store.create(1, '/f1', [binding('/a')]);
    const b1 = store.create(2, '/f2', [binding('/b')]);
    const a2 = store.create(1, '/f1', [binding('/a2')]);
    expect(a1.invalidated).toEqual([]);
    expect(a2.invalidated).toEqual([a1.snapshot.id]);
    expect(store.resolve(SnapshotStore.tokenFor(a1.snapshot.id, 0)).kind).toBe('invalidated');
    expect(store.resolve(SnapshotStore.tokenFor(b1.snapshot.id, 0))).toMatchObject({
      kind: 'ok',
      binding: { ref: { path: '/b' } },
    });
    expect(store.resolve(SnapshotStore.tokenFor(a2.snapshot.id, 0))).toMatchObject({
      kind: 'ok',
      binding: { ref: { path: '/a2' } },
    });
    expect(store.resolve(SnapshotStore.tokenFor(a2.snapshot.id, 7)).kind).toBe('unknown_row');
    expect(store.resolve('szzzzzz:0').kind).toBe('unknown_snapshot');
  });

  it('never reuses an id, and forgetting a window invalidates its snapshot', () => {
    const store = new SnapshotStore();
    const ids = new Set(
      Array.from({ length: 50 }, (_, i) => store.create(i % 3, '/f', []).snapshot.id),
    );
    expect(ids.size).toBe(50);
    const s = store.create(9, '/f', [binding('/x')]);
    store.forgetWindow(9);
    expect(store.resolve(`${s.snapshot.id}:0`).kind).toBe('invalidated');
  });
});
