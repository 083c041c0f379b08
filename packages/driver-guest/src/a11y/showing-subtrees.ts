import type { NodeData } from './read-node.js';

/**
 * showingSubtrees lists the objects under `root` (itself included) whose subtree has something in
 * the AT-SPI `showing` state: what a lean observe walks into (lean-tree.ts). Everything else is a
 * hidden subtree (a closed menu's items) that a lean observe only counts. Iterative post-order,
 * so a deep tree cannot overflow the stack; linear in the subtree's size, in memory only.
 */
export function showingSubtrees(
  get: (path: string) => NodeData | undefined,
  root: string,
): Set<string> {
  const seen = new Set<string>();
  const order: NodeData[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const node = get(stack.pop() as string);
    if (!node) continue;
    order.push(node);
    stack.push(...node.children);
  }
  // Children come after their parent in `order`: walking it backwards visits them first.
  for (let i = order.length - 1; i >= 0; i -= 1) {
    const node = order[i] as NodeData;
    if (node.states.includes('showing') || node.children.some((c) => seen.has(c)))
      seen.add(node.path);
  }
  return seen;
}
