import { describe, expect, it } from 'vitest';
import { walkWindow } from './lean-tree.js';
import type { NodeData } from './read-node.js';

// frame > menu_bar > File (showing) > [New, Recent > [a, b]] (all hidden); frame > panel (not
// showing, but holding a showing button) > [button, hidden label]
const tree: Record<string, [role: string, showing: boolean, children: string[]]> = {
  frame: ['frame', true, ['bar', 'panel']],
  bar: ['menu_bar', true, ['file']],
  file: ['menu', true, ['new', 'recent']],
  new: ['menu_item', false, []],
  recent: ['menu', false, ['a', 'b']],
  a: ['menu_item', false, []],
  b: ['menu_item', false, []],
  panel: ['panel', false, ['ok', 'tip']],
  ok: ['push_button', true, []],
  tip: ['label', false, []],
};
const get = (path: string): NodeData | undefined => {
  const t = tree[path];
  if (!t) return undefined;
  const [role, showing, children] = t;
  return {
    path,
    parent: null,
    children,
    role,
    name: path,
    description: '',
    states: showing ? ['showing', 'visible'] : ['visible'],
    ifaces: new Set(),
  };
};
const walk = (includeHidden: boolean, maxDepth = 64, root = 'frame') =>
  walkWindow(get, root, { maxDepth, includeHidden, skip: () => false });

describe('walkWindow', () => {
  it('full mode lists every element depth-first in child order', () => {
    const { entries, depthCut } = walk(true);
    expect(entries.map((e) => `${e.node.path}@${e.depth}`)).toEqual([
      'frame@0',
      'bar@1',
      'file@2',
      'new@3',
      'recent@3',
      'a@4',
      'b@4',
      'panel@1',
      'ok@2',
      'tip@2',
    ]);
    expect(entries.some((e) => e.hidden !== undefined)).toBe(false);
    expect(depthCut).toBe(false);
  });

  it('lean mode keeps what shows and its structure, counting the rest on the parent', () => {
    const { entries } = walk(false);
    expect(entries.map((e) => [e.node.path, e.hidden])).toEqual([
      ['frame', undefined],
      ['bar', undefined],
      ['file', 4],
      ['panel', 1],
      ['ok', undefined],
    ]);
    const hidden = entries.reduce((n, e) => n + (e.hidden ?? 0), 0);
    expect(entries.length + hidden).toBe(walk(true).entries.length);
  });

  it('counts only what the full walk would return within max_depth', () => {
    const lean = walk(false, 3);
    const full = walk(true, 3);
    expect(lean.entries.find((e) => e.node.path === 'file')?.hidden).toBe(2);
    expect(full.depthCut).toBe(true);
    expect(lean.entries.length + 2 + 1).toBe(full.entries.length);
  });

  it('walks a window that is not showing at all (minimised) whole', () => {
    expect(walk(false, 64, 'recent').entries.map((e) => e.node.path)).toEqual(['recent', 'a', 'b']);
  });
});
