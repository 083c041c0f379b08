import type { Rect, WindowInfo } from '@cubicle/contract/guest';
import { X11Error } from './x11/x11-connection.js';
import type { X11Display } from './x11/x11-display.js';
import { getGeometry, getProperty, translateCoordinates, u32List } from './x11/x11-requests.js';

/** ClientWindow is a WindowInfo plus the client area the app draws in (screen coordinates). */
export interface ClientWindow extends WindowInfo {
  client: Rect;
}

const ATOMS = [
  '_NET_CLIENT_LIST_STACKING',
  '_NET_CLIENT_LIST',
  '_NET_ACTIVE_WINDOW',
  '_NET_WM_NAME',
  '_NET_WM_PID',
  '_NET_WM_STATE',
  '_NET_WM_STATE_HIDDEN',
  '_NET_FRAME_EXTENTS',
  'UTF8_STRING',
] as const;
type AtomName = (typeof ATOMS)[number] | 'WM_NAME' | 'WM_CLASS';

async function atoms(d: X11Display): Promise<Record<AtomName, number>> {
  const values = await Promise.all(ATOMS.map((a) => d.atom(a)));
  const out = Object.fromEntries(ATOMS.map((a, i) => [a, values[i]!])) as Record<AtomName, number>;
  out.WM_NAME = 39; // predefined atoms
  out.WM_CLASS = 67;
  return out;
}

/** stackingOrder lists the managed top-level windows bottom to top, as the window manager says. */
export async function stackingOrder(d: X11Display): Promise<number[]> {
  const x = await d.conn();
  const a = await atoms(d);
  const stacking = u32List(await getProperty(x, x.setup.root, a._NET_CLIENT_LIST_STACKING));
  if (stacking.length > 0) return stacking;
  return u32List(await getProperty(x, x.setup.root, a._NET_CLIENT_LIST));
}

/**
 * listWindows reads every managed top-level window from EWMH, front to back. The requests for
 * all windows are pipelined on the one connection, so a dozen windows cost one round trip's
 * latency more than one. A window that disappears while being read is left out, not an error.
 */
export async function listWindows(d: X11Display): Promise<ClientWindow[]> {
  const x = await d.conn();
  const a = await atoms(d);
  const [order, activeProp] = await Promise.all([
    stackingOrder(d),
    getProperty(x, x.setup.root, a._NET_ACTIVE_WINDOW),
  ]);
  const active = u32List(activeProp)[0] ?? 0;
  const rows = await Promise.all(
    order.map((id, z) => readWindow(d, a, id, z, active).catch(ignoreGone)),
  );
  return rows.filter((r): r is ClientWindow => r !== null).reverse();
}

/** findWindow returns one managed top-level window, or null when it is not (or no longer) one. */
export async function findWindow(d: X11Display, id: number): Promise<ClientWindow | null> {
  const x = await d.conn();
  const a = await atoms(d);
  // One round trip, not three: the window is read while its place in the stack is looked up
  // (every observe and element action starts here).
  const [order, activeList, win] = await Promise.all([
    stackingOrder(d),
    getProperty(x, x.setup.root, a._NET_ACTIVE_WINDOW),
    readWindow(d, a, id, 0, 0).catch(ignoreGone),
  ]);
  const z = order.indexOf(id);
  if (z < 0 || !win) return null;
  return { ...win, z_order: z, focused: id === (u32List(activeList)[0] ?? 0) };
}

function ignoreGone(err: unknown): null {
  if (err instanceof X11Error) return null;
  throw err;
}

async function readWindow(
  d: X11Display,
  a: Record<AtomName, number>,
  id: number,
  z: number,
  active: number,
): Promise<ClientWindow> {
  const x = await d.conn();
  const [netName, wmName, pid, cls, state, extents, geo, pos] = await Promise.all([
    getProperty(x, id, a._NET_WM_NAME, 16384),
    getProperty(x, id, a.WM_NAME, 16384),
    getProperty(x, id, a._NET_WM_PID, 4),
    getProperty(x, id, a.WM_CLASS, 1024),
    getProperty(x, id, a._NET_WM_STATE, 256),
    getProperty(x, id, a._NET_FRAME_EXTENTS, 16),
    getGeometry(x, id),
    translateCoordinates(x, id, x.setup.root),
  ]);
  const title = (
    netName ? netName.data.toString('utf8') : (wmName?.data.toString('latin1') ?? '')
  ).slice(0, 4096);
  const pidValue = u32List(pid)[0];
  const classParts = cls ? cls.data.toString('latin1').split('\0') : [];
  const [left = 0, right = 0, top = 0, bottom = 0] = u32List(extents);
  const client = { x: pos.x, y: pos.y, w: geo.width, h: geo.height };
  return {
    window_id: id,
    title,
    pid: pidValue && pidValue > 0 ? pidValue : null,
    app: classParts[1] ? classParts[1].slice(0, 256) : null,
    geometry: {
      x: client.x - left,
      y: client.y - top,
      w: client.w + left + right,
      h: client.h + top + bottom,
    },
    z_order: z,
    focused: id === active,
    minimized: u32List(state).includes(a._NET_WM_STATE_HIDDEN),
    client,
  };
}

/** toWindowInfo drops the driver-only fields before a window goes on the wire. */
export function toWindowInfo(w: ClientWindow): WindowInfo {
  const { client: _client, ...info } = w;
  return info;
}
