import { setTimeout as sleep } from 'node:timers/promises';
import type { X11Display } from '../windows/x11/x11-display.js';
import {
  getProperty,
  queryTree,
  sendRootClientMessage,
  translateCoordinates,
  u32List,
} from '../windows/x11/x11-requests.js';

async function activeWindow(x11: X11Display): Promise<number> {
  const x = await x11.conn();
  return u32List(await getProperty(x, x.setup.root, await x11.atom('_NET_ACTIVE_WINDOW')))[0] ?? 0;
}

/**
 * activateWindow raises and focuses a window through the window manager (`_NET_ACTIVE_WINDOW`)
 * so foreground input lands on it and not on whatever covers the point. Returns whether focus
 * had to move, and whether the window manager did it within `ms`.
 */
export async function activateWindow(
  x11: X11Display,
  windowId: number,
  ms = 1000,
): Promise<{ changed: boolean; isActive: boolean }> {
  const current = await activeWindow(x11);
  if (current === windowId) return { changed: false, isActive: true };
  const x = await x11.conn();
  await sendRootClientMessage(x, windowId, await x11.atom('_NET_ACTIVE_WINDOW'), [2, 0, current]);
  const deadline = performance.now() + ms;
  while (performance.now() < deadline) {
    if ((await activeWindow(x11)) === windowId) return { changed: true, isActive: true };
    await sleep(15);
  }
  return { changed: true, isActive: false };
}

/** frameOf is the root's child that holds the window: the window manager's frame around it. */
async function frameOf(x11: X11Display, windowId: number): Promise<number> {
  const x = await x11.conn();
  let current = windowId;
  for (let hops = 0; hops < 16; hops += 1) {
    const { parent } = await queryTree(x, current);
    if (parent === x.setup.root || parent === 0) return current;
    current = parent;
  }
  return current;
}

/**
 * isPointOnWindow says whether the window is the topmost one at a screen point, so an XTest
 * click there reaches it rather than a window covering it (a dialog, an always-on-top panel).
 */
export async function isPointOnWindow(
  x11: X11Display,
  windowId: number,
  point: { x: number; y: number },
): Promise<boolean> {
  const x = await x11.conn();
  const [hit, frame] = await Promise.all([
    translateCoordinates(x, x.setup.root, x.setup.root, point.x, point.y),
    frameOf(x11, windowId),
  ]);
  return hit.child === frame;
}
