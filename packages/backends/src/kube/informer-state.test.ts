import { describe, expect, it } from 'vitest';
import { applyWatchEvent, emptyState, replaceFromList, type KubeObject } from './informer-state.js';

const obj = (name: string, rv: string): KubeObject => ({ metadata: { name, resourceVersion: rv } });

describe('replaceFromList', () => {
  it('fills the cache, takes the list resourceVersion and reports additions', () => {
    const state = emptyState();
    const changes = replaceFromList(state, {
      metadata: { resourceVersion: '10' },
      items: [obj('a', '5'), obj('b', '7')],
    });
    expect(state.resourceVersion).toBe('10');
    expect([...state.objects.keys()]).toEqual(['a', 'b']);
    expect(changes.map((c) => c.name)).toEqual(['a', 'b']);
  });

  it('a relist reports objects deleted while no watch ran, and only changed ones', () => {
    const state = emptyState();
    replaceFromList(state, {
      metadata: { resourceVersion: '10' },
      items: [obj('a', '5'), obj('b', '7')],
    });
    const changes = replaceFromList(state, {
      metadata: { resourceVersion: '20' },
      items: [obj('a', '5'), obj('c', '15')],
    });
    expect(changes).toEqual([
      { name: 'c', object: obj('c', '15') },
      { name: 'b', object: undefined },
    ]);
    expect(state.objects.has('b')).toBe(false);
    expect(state.resourceVersion).toBe('20');
  });
});

describe('applyWatchEvent', () => {
  const listed = () => {
    const state = emptyState();
    replaceFromList(state, { metadata: { resourceVersion: '10' }, items: [obj('a', '5')] });
    return state;
  };

  it('added and modified objects move the resume point forward', () => {
    const state = listed();
    expect(applyWatchEvent(state, { type: 'ADDED', object: obj('b', '11') })).toEqual({
      kind: 'applied',
      changes: [{ name: 'b', object: obj('b', '11') }],
    });
    applyWatchEvent(state, { type: 'MODIFIED', object: obj('a', '12') });
    expect(state.resourceVersion).toBe('12');
    expect(state.objects.get('a')?.metadata?.resourceVersion).toBe('12');
  });

  it('deleted objects leave the cache', () => {
    const state = listed();
    const out = applyWatchEvent(state, { type: 'DELETED', object: obj('a', '13') });
    expect(out).toEqual({ kind: 'applied', changes: [{ name: 'a', object: undefined }] });
    expect(state.objects.size).toBe(0);
    expect(state.resourceVersion).toBe('13');
  });

  it('a bookmark moves the resume point without touching objects', () => {
    const state = listed();
    expect(
      applyWatchEvent(state, { type: 'BOOKMARK', object: { metadata: { resourceVersion: '99' } } }),
    ).toEqual({ kind: 'applied', changes: [] });
    expect(state.resourceVersion).toBe('99');
    expect([...state.objects.keys()]).toEqual(['a']);
  });

  it('410 Gone / Expired in the stream asks for a relist and keeps the cache', () => {
    const state = listed();
    expect(
      applyWatchEvent(state, {
        type: 'ERROR',
        object: {
          kind: 'Status',
          code: 410,
          reason: 'Expired',
          message: 'too old resource version',
        },
      }),
    ).toEqual({ kind: 'relist' });
    expect(applyWatchEvent(state, { type: 'ERROR', object: { reason: 'Gone' } })).toEqual({
      kind: 'relist',
    });
    expect(state.resourceVersion).toBe('10');
    expect(state.objects.size).toBe(1);
  });

  it('other stream errors and unknown events ask for a backed-off resume', () => {
    const state = listed();
    expect(
      applyWatchEvent(state, { type: 'ERROR', object: { code: 500, message: 'etcd down' } }),
    ).toEqual({ kind: 'error', code: 500, message: 'etcd down' });
    expect(applyWatchEvent(state, { type: 'WHAT' }).kind).toBe('error');
    expect(state.resourceVersion).toBe('10');
  });
});
