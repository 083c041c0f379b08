import type { AtspiBus } from './atspi-bus.js';
import { IFACE, roleName, statesFromBits } from './atspi-constants.js';
import { APP_ROOT, type NodeData, readNode, readSubtree } from './read-node.js';
import { HUGE_CHILD_COUNT } from './visible-descendants.js';

/** CacheItem is one row of `org.a11y.atspi.Cache.GetItems`: `((so)(so)(so)iiassusau)`. */
export type CacheItem = [
  [string, string],
  [string, string],
  [string, string],
  number,
  number,
  string[],
  string,
  number,
  string,
  number[],
];

/** nodeFromCacheItem converts a cache row (also the body of a Cache.AddAccessible signal). */
export function nodeFromCacheItem(appBus: string, item: CacheItem): NodeData {
  const [[, path], , [parentBus, parentPath], , , ifaces, name, role, description, states] = item;
  return {
    path,
    parent: parentBus === appBus && parentPath !== '/org/a11y/atspi/null' ? parentPath : null,
    children: [],
    role: roleName(role),
    name,
    description,
    states: statesFromBits(states),
    ifaces: new Set(ifaces),
  };
}

/**
 * readSeed reads an app's whole tree in one `Cache.GetItems` call (~190 ms at 2,000 objects),
 * or by walking it when the toolkit has no cache. The cache gives each object's parent and index
 * but no child lists; `unordered` names the objects whose children it cannot order (index -1,
 * or fewer rows than the object's child count), for the mirror to ask directly.
 */
export async function readSeed(
  bus: AtspiBus,
  appBus: string,
): Promise<{ nodes: Map<string, NodeData>; unordered: string[] }> {
  let items: CacheItem[];
  try {
    const [body] = await bus.call(appBus, '/org/a11y/atspi/cache', IFACE.cache, 'GetItems');
    items = body as CacheItem[];
  } catch {
    return { nodes: await readSubtree(bus, appBus, APP_ROOT), unordered: [] };
  }
  const nodes = new Map<string, NodeData>();
  const byParent = new Map<string, [number, string][]>();
  const expected = new Map<string, number>();
  // The bridge reports -1 children for an object managing its descendants: its real count
  // tells a GTK tree view (thousands, listed) from a spreadsheet (billions, never listed).
  const managed: NodeData[] = [];
  for (const item of items) {
    const node = nodeFromCacheItem(appBus, item);
    if (item[4] > HUGE_CHILD_COUNT) node.huge = true;
    else if (item[4] < 0 && node.states.includes('manages_descendants')) managed.push(node);
    nodes.set(node.path, node);
    expected.set(node.path, item[4]);
    if (node.parent) {
      const list = byParent.get(node.parent) ?? [];
      list.push([item[3], node.path]);
      byParent.set(node.parent, list);
    }
  }
  await Promise.all(
    managed.map(async (node) => {
      const count = await bus
        .getProperty({ bus: appBus, path: node.path }, IFACE.accessible, 'ChildCount')
        .then(Number, () => 0);
      if (count > HUGE_CHILD_COUNT) node.huge = true;
    }),
  );
  if (!nodes.has(APP_ROOT))
    nodes.set(APP_ROOT, await readNode(bus, { bus: appBus, path: APP_ROOT }));
  const unordered = [APP_ROOT];
  for (const [path, node] of nodes) {
    const kids = byParent.get(path) ?? [];
    if (path !== APP_ROOT) node.children = kids.sort((a, b) => a[0] - b[0]).map(([, p]) => p);
    if (kids.some(([i]) => i < 0) || (expected.get(path) ?? 0) !== node.children.length)
      unordered.push(path);
  }
  return { nodes, unordered };
}
