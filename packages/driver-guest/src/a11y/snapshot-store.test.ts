import { describe, expect, it } from 'vitest';
import { type Snapshot, SnapshotStore } from './snapshot-store.js';

const binding = (path: string) => ({
  ref: { bus: ':1.5', path },
  fingerprint: { role: 'push_button', name: 'OK', ancestors: [] },
});

/** fill adds rows for paths, tokens by position unless given. */
function fill(s: Snapshot, paths: string[], tokens: string[] = []): Snapshot {
  paths.forEach((p, n) =>
    s.add({ ...binding(p), token: tokens[n] ?? SnapshotStore.tokenFor(s.id, n) }),
  );
  return s;
}

describe('SnapshotStore', () => {
  it('a new observe of a window invalidates only that window’s older snapshot', () => {
    const store = new SnapshotStore();
    const a1 = store.create(1, '/f1');
    fill(a1.snapshot, ['/a']);
    const b1 = store.create(2, '/f2');
    fill(b1.snapshot, ['/b']);
    const a2 = store.create(1, '/f1');
    fill(a2.snapshot, ['/a2']);
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
      Array.from({ length: 50 }, (_, i) => store.create(i % 3, '/f').snapshot.id),
    );
    expect(ids.size).toBe(50);
    const s = store.create(9, '/f');
    fill(s.snapshot, ['/x']);
    store.forgetWindow(9);
    expect(store.resolve(`${s.snapshot.id}:0`).kind).toBe('invalidated');
  });

  it('a diff carries the base’s surviving tokens; its removed ones resolve as removed', () => {
    const store = new SnapshotStore();
    const base = fill(store.create(1, '/f').snapshot, ['/a', '/b']);
    const [kept, gone] = [`${base.id}:0`, `${base.id}:1`];
    const diff = store.create(1, '/f', base);
    expect(diff.invalidated).toEqual([]);
    fill(diff.snapshot, ['/a', '/c'], [kept, `${diff.snapshot.id}:1`]);
    store.finish(diff.snapshot);
    expect(store.resolve(kept)).toMatchObject({ kind: 'ok', snapshot: diff.snapshot });
    expect(store.resolve(`${diff.snapshot.id}:1`)).toMatchObject({ kind: 'ok' });
    expect(store.resolve(gone).kind).toBe('removed');
    // A full observe afterwards invalidates the diff and the base id it answered for.
    const next = store.create(1, '/f');
    expect(next.invalidated.sort()).toEqual([base.id, diff.snapshot.id].sort());
    expect(store.resolve(kept).kind).toBe('invalidated');
  });

  it('only the window’s latest snapshot is a base; others say why not', () => {
    const store = new SnapshotStore();
    const a1 = fill(store.create(1, '/f').snapshot, ['/a']);
    const b1 = fill(store.create(2, '/g').snapshot, ['/b']);
    expect(store.checkBase(1, a1.id)).toEqual({ kind: 'ok', snapshot: a1 });
    expect(store.checkBase(1, b1.id).kind).toBe('other_window');
    expect(store.checkBase(1, 's999999').kind).toBe('unknown');
    store.create(1, '/f');
    expect(store.checkBase(1, a1.id).kind).toBe('replaced');
    // A diff's base id still answers for the diff's tokens, but is no longer diffable itself.
    const c1 = fill(store.create(3, '/h').snapshot, ['/c']);
    const c2 = store.create(3, '/h', c1).snapshot;
    fill(c2, ['/c'], [`${c1.id}:0`]);
    store.finish(c2);
    expect(store.checkBase(3, c1.id).kind).toBe('replaced');
    expect(store.checkBase(3, c2.id).kind).toBe('ok');
  });

  it('a diff that carries nothing of an alias drops it', () => {
    const store = new SnapshotStore();
    const base = fill(store.create(1, '/f').snapshot, ['/a']);
    const diff = store.create(1, '/f', base).snapshot;
    fill(diff, ['/z']);
    store.finish(diff);
    expect(diff.aliases).toEqual([]);
    expect(store.resolve(`${base.id}:0`).kind).toBe('invalidated');
  });
});
