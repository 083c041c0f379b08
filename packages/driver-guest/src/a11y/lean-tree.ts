import type { NodeData } from './read-node.js';

/** TreeEntry is one row-to-be of an observe, in window order. */
export type TreeEntry = {
  node: NodeData;
  depth: number;
  /** Elements under this one the lean walk left out (none showing); absent when none were. */
  hidden?: number;
};

export type WalkOptions = {
  maxDepth: number;
  /** true: unroll every subtree (the full tree); false: summarise subtrees with nothing showing. */
  includeHidden: boolean;
  /** Whether a child is left out altogether (echoed text), in both modes alike. */
  skip: (child: NodeData, parent: NodeData) => boolean;
};

/**
 * walkWindow lists a window's elements depth-first in child order, so rows read top to bottom
 * as the window does. In lean mode a child subtree in which nothing has the AT-SPI `showing`
 * state is left out and counted on its parent's `hidden`: a closed menu is its one menu row
 * (the menu bar shows it) with its items counted. An empty Writer window's closed menus are
 * most of its 1,933 elements. A non-showing element with a showing descendant is kept (the
 * structure above what is seen). A window that is not showing at all (minimised) is walked
 * whole: summarising everything to one row would tell nothing. Counting first in one pass keeps
 * this linear in the tree's size.
 */
export function walkWindow(
  get: (path: string) => NodeData | undefined,
  rootPath: string,
  opts: WalkOptions,
): { entries: TreeEntry[]; depthCut: boolean } {
  const root = get(rootPath);
  if (!root) return { entries: [], depthCut: false };
  const lean = !opts.includeHidden && root.states.includes('showing');
  const kids = (node: NodeData): NodeData[] =>
    node.children.flatMap((p) => {
      const child = get(p);
      return child && !opts.skip(child, node) ? [child] : [];
    });

  // rows: what the full walk returns under a node; seen: whether anything there is showing.
  const below = new Map<string, { rows: number; seen: boolean }>();
  const count = (node: NodeData, depth: number): { rows: number; seen: boolean } => {
    let rows = 0;
    let seen = false;
    if (depth < opts.maxDepth) {
      for (const child of kids(node)) {
        const c = count(child, depth + 1);
        rows += 1 + c.rows;
        seen ||= c.seen || child.states.includes('showing');
      }
    }
    const stats = { rows, seen };
    below.set(node.path, stats);
    return stats;
  };
  if (lean) count(root, 0);

  const entries: TreeEntry[] = [];
  let depthCut = false;
  const visit = (node: NodeData, depth: number): void => {
    const entry: TreeEntry = { node, depth };
    entries.push(entry);
    if (depth >= opts.maxDepth) {
      if (node.children.length > 0) depthCut = true;
      return;
    }
    let hidden = 0;
    for (const child of kids(node)) {
      const stats = below.get(child.path);
      if (lean && stats && !stats.seen && !child.states.includes('showing')) {
        hidden += 1 + stats.rows;
      } else visit(child, depth + 1);
    }
    if (hidden > 0) entry.hidden = hidden;
  };
  visit(root, 0);
  return { entries, depthCut };
}
