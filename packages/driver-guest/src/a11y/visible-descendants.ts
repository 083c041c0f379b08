import type { AtspiBus } from './atspi-bus.js';
import { IFACE } from './atspi-constants.js';

/**
 * Above this many children an object's child list is never asked for: a LibreOffice Calc sheet
 * reports 2,147,483,647 cells (`manages_descendants`), and one `GetChildren` on it kept the app
 * busy past every timeout (measured: each later call, even a Ping, timed out after 5 s).
 * GTK tree views also manage their descendants but hold thousands, not billions: they stay
 * enumerated as before.
 */
export const HUGE_CHILD_COUNT = 50_000;

/** At most this many cells of a huge table are mirrored: a full screen of Calc is ~500. */
const MAX_VISIBLE_CELLS = 1_000;

const NULL_PATH = '/org/a11y/atspi/null';

type Ref = [string, string];

/**
 * visibleDescendants lists the children of a huge managed table that are on screen: the cells
 * under its top-left and bottom-right corners give the visible row and column range, and each
 * cell in between is fetched by `Table.GetAccessibleAt` (the app creates them on demand). An
 * object without the Table interface yields none: there is no bounded way to list its children.
 * Limit: cells hidden behind a frozen pane or a floating window are listed as if visible.
 */
export async function visibleDescendants(
  bus: AtspiBus,
  appBus: string,
  path: string,
  ifaces: Set<string>,
): Promise<string[]> {
  if (!ifaces.has(IFACE.table) || !ifaces.has(IFACE.component)) return [];
  const call = (iface: string, member: string, sig?: string, body?: unknown[]) =>
    bus.call(appBus, path, iface, member, sig, body);
  const [ext] = await call(IFACE.component, 'GetExtents', 'u', [0]);
  const [x, y, w, h] = ext as [number, number, number, number];
  if (w <= 0 || h <= 0) return [];
  const corner = async (px: number, py: number): Promise<{ row: number; col: number } | null> => {
    const [ref] = await call(IFACE.component, 'GetAccessibleAtPoint', 'iiu', [px, py, 0]);
    const [cellBus, cellPath] = ref as Ref;
    if (cellBus !== appBus || cellPath === NULL_PATH) return null;
    const [index] = await bus.call(appBus, cellPath, IFACE.accessible, 'GetIndexInParent');
    const [[row], [col]] = await Promise.all([
      call(IFACE.table, 'GetRowAtIndex', 'i', [index]),
      call(IFACE.table, 'GetColumnAtIndex', 'i', [index]),
    ]);
    return row === -1 || col === -1 ? null : { row: Number(row), col: Number(col) };
  };
  const [first, last] = await Promise.all([corner(x + 2, y + 2), corner(x + w - 3, y + h - 3)]);
  if (!first || !last) return [];
  const cols = Math.max(1, last.col - first.col + 1);
  const rows = Math.max(
    1,
    Math.min(last.row - first.row + 1, Math.floor(MAX_VISIBLE_CELLS / cols)),
  );
  const cells: Promise<unknown[]>[] = [];
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < Math.min(cols, MAX_VISIBLE_CELLS); c++)
      cells.push(call(IFACE.table, 'GetAccessibleAt', 'ii', [first.row + r, first.col + c]));
  const refs = await Promise.all(cells);
  return refs
    .map(([ref]) => ref as Ref)
    .filter(([b, p]) => b === appBus && p !== NULL_PATH)
    .map(([, p]) => p);
}
