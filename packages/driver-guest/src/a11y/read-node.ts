import type { ElementState } from '@cubicle/contract/guest';
import type { AtspiBus, AtspiRef } from './atspi-bus.js';
import { IFACE, roleName, statesFromBits } from './atspi-constants.js';
import { HUGE_CHILD_COUNT, visibleDescendants } from './visible-descendants.js';

/** NodeData is what the mirror keeps per accessible object, all read without side effects. */
export interface NodeData {
  path: string;
  /** Parent path in the same app; null for the application root. */
  parent: string | null;
  children: string[];
  role: string;
  name: string;
  description: string;
  states: ElementState[];
  ifaces: Set<string>;
  /**
   * Set when the object manages more children than can be listed (a spreadsheet's cells):
   * `children` then holds only the visible ones (see visibleDescendants), re-read on every sync.
   */
  huge?: boolean;
}

export const APP_ROOT = '/org/a11y/atspi/accessible/root';
const NULL_PATH = '/org/a11y/atspi/null';

type Variant = { value: unknown };

/**
 * readNode reads one object directly, issuing its five calls at once (the bus pipelines them).
 * It is the ground truth the mirror is compared against, and how the mirror learns objects that
 * GTK3 added without any event (GtkBox.pack_start emits no children-changed). The child list is
 * asked for after the child count is known: a huge one is never listed (see HUGE_CHILD_COUNT).
 */
export async function readNode(bus: AtspiBus, ref: AtspiRef): Promise<NodeData> {
  const { bus: dest, path } = ref;
  const [role, props, state, ifaces] = await Promise.all([
    bus.call(dest, path, IFACE.accessible, 'GetRole'),
    bus.call(dest, path, 'org.freedesktop.DBus.Properties', 'GetAll', 's', [IFACE.accessible]),
    bus.call(dest, path, IFACE.accessible, 'GetState'),
    bus.call(dest, path, IFACE.accessible, 'GetInterfaces'),
  ]);
  const all = (props[0] ?? {}) as Record<string, Variant>;
  const parentRef = all.Parent?.value as [string, string] | undefined;
  const ifaceSet = new Set(ifaces[0] as string[]);
  const huge = Number(all.ChildCount?.value ?? 0) > HUGE_CHILD_COUNT;
  const children = huge
    ? await visibleDescendants(bus, dest, path, ifaceSet).catch(() => [])
    : ((await bus.call(dest, path, IFACE.accessible, 'GetChildren'))[0] as [string, string][])
        .filter(([b]) => b === dest)
        .map(([, p]) => p);
  return {
    path,
    parent: parentRef && parentRef[0] === dest && parentRef[1] !== NULL_PATH ? parentRef[1] : null,
    children,
    role: roleName(Number(role[0])),
    name: String(all.Name?.value ?? ''),
    description: String(all.Description?.value ?? ''),
    states: statesFromBits(state[0] as number[]),
    ifaces: ifaceSet,
    ...(huge ? { huge } : {}),
  };
}

/**
 * How many objects subtree reads ask one app about at once (four or five calls each). Chromium
 * answers its bridge's calls one at a time on its main thread: a 2,000-row table's level, all
 * asked at once while the page still loaded on a loaded machine, kept ~10,000 calls waiting and
 * 4,800 of them timed out (CALL_TIMEOUT_MS), each still answered later, so the retries queued
 * behind the leftovers and the form's fields were not read within a minute (measured).
 */
const READS_IN_FLIGHT = 128;

/** Slots bounds the reads in flight to one app, across every subtree read at the same time. */
class Slots {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  async run<T>(fn: () => Promise<T>): Promise<T> {
    while (this.active >= READS_IN_FLIGHT) await new Promise<void>((r) => this.waiting.push(r));
    this.active += 1;
    try {
      return await fn();
    } finally {
      this.active -= 1;
      this.waiting.shift()?.();
    }
  }
}

const slotsByBus = new WeakMap<AtspiBus, Map<string, Slots>>();

function slotsFor(bus: AtspiBus, appBus: string): Slots {
  let byApp = slotsByBus.get(bus);
  if (!byApp) slotsByBus.set(bus, (byApp = new Map()));
  let slots = byApp.get(appBus);
  if (!slots) byApp.set(appBus, (slots = new Slots()));
  return slots;
}

/**
 * readSubtree reads `root` and everything below it breadth-first, at most READS_IN_FLIGHT
 * objects of the app at once. Objects that vanish mid-read (or whose calls fail) are skipped:
 * the caller sees them missing, not broken, and their parent's list still names them.
 */
export async function readSubtree(
  bus: AtspiBus,
  appBus: string,
  root: string,
): Promise<Map<string, NodeData>> {
  const out = new Map<string, NodeData>();
  const slots = slotsFor(bus, appBus);
  let level = [root];
  while (level.length > 0) {
    const read = await Promise.all(
      level.map((path) => slots.run(() => readNode(bus, { bus: appBus, path })).catch(() => null)),
    );
    level = [];
    for (const node of read) {
      if (!node || out.has(node.path)) continue;
      out.set(node.path, node);
      level.push(...node.children.filter((c) => !out.has(c)));
    }
  }
  return out;
}
