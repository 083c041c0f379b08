import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ActionResult, WindowCloseRequest } from '@cubicle/contract/guest';
import { AppError } from '@cubicle/contract/errors';
import { confirmed, suspectedNoop } from '../actions/action-results.js';
import { findWindow, stackingOrder } from './list-windows.js';
import type { X11Display } from './x11/x11-display.js';
import { sendRootClientMessage } from './x11/x11-requests.js';

const POLL_MS = 25;
// EWMH source indication 2: the request comes from a pager or tool acting for the user.
const SOURCE_TOOL = 2;

async function waitGone(x11: X11Display, id: number, ms: number): Promise<boolean> {
  const deadline = performance.now() + ms;
  for (;;) {
    if (!(await stackingOrder(x11)).includes(id)) return true;
    if (performance.now() >= deadline) return false;
    await sleep(POLL_MS);
  }
}

async function processGroup(pid: number): Promise<number | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'latin1');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
  } catch {
    return null;
  }
}

/**
 * closeWindow asks the window manager to close the window, as its close button would, and
 * reports `confirmed` only once the window has left the client list. An app that stays open
 * (a "save changes?" prompt) is `suspected_noop`. With `force`, the app's process group gets
 * SIGTERM, but never the driver's own group.
 */
export async function closeWindow(x11: X11Display, req: WindowCloseRequest): Promise<ActionResult> {
  const started = performance.now();
  const win = await findWindow(x11, req.window_id);
  if (!win) throw new AppError('window_not_found', `no window ${req.window_id}`);
  const x = await x11.conn();
  await sendRootClientMessage(x, req.window_id, await x11.atom('_NET_CLOSE_WINDOW'), [
    0,
    SOURCE_TOOL,
  ]);
  await x.sync();
  const delivery = { mode: 'background' as const, focus_changed: false, pointer_moved: false };
  const closedEvidence = [
    {
      kind: 'window_change' as const,
      change: 'closed' as const,
      window_id: req.window_id,
      title: win.title,
    },
  ];
  if (await waitGone(x11, req.window_id, req.timeout_ms))
    return confirmed({ route: 'window_manager', started, delivery }, closedEvidence);
  if (req.force && win.pid) {
    const group = await processGroup(win.pid);
    const own = await processGroup(process.pid);
    if (group && group > 1 && group !== own) {
      try {
        process.kill(-group, 'SIGTERM');
      } catch {
        /* already gone */
      }
      if (await waitGone(x11, req.window_id, 3_000))
        return confirmed({ route: 'process', started, delivery }, closedEvidence);
    }
  }
  return suspectedNoop(
    { route: req.force ? 'process' : 'window_manager', started, delivery },
    'The window is still open.',
    {},
    {
      target: 'observe',
      reason: 'suspected_noop',
      hint: 'The window is still open; it may be asking to confirm (save changes?). Observe it.',
    },
  );
}
