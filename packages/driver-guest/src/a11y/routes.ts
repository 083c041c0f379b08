import { GuestRoutes, type ObserveRequest, type ObserveResponse } from '@cubicle/contract/guest';
import { AppError } from '@cubicle/contract/errors';
import type { FastifyInstance } from 'fastify';
import { captureScreenshot } from '../screen/capture-screenshot.js';
import { desktopIo } from '../server/desktop-io.js';
import type { GuestDeps } from '../server/deps.js';
import { guestRoute } from '../server/guest-route.js';
import { findWindow } from '../windows/list-windows.js';
import { recordAction } from '../recording/record-action.js';
import { A11yDesktop } from './a11y-desktop.js';
import { isSecure } from './atspi-constants.js';
import { actOnElement } from './act-on-element.js';
import { observeWindow } from './observe-window.js';
import { verifyState } from './verify-state.js';

/**
 * registerA11yRoutes mounts observe, act.element and verify_state. The a11y bus connection is
 * opened on first use (the desktop may still be starting) and retried after a failure; it is
 * closed with the app. Window facts and observe screenshots come from the shared DesktopIo, so
 * an observe's screenshot becomes the window's latest one for pixel input.
 */
export function registerA11yRoutes(app: FastifyInstance, deps: GuestDeps) {
  const io = desktopIo(deps);
  let pending: Promise<A11yDesktop> | null = null;
  const desktop = (): Promise<A11yDesktop> => {
    if (!deps.sessionBusAddress)
      return Promise.reject(
        new AppError(
          'service_unavailable',
          'the driver has no session bus, so no accessibility bus',
        ),
      );
    pending ??= A11yDesktop.connect({
      display: deps.display,
      sessionBusAddress: deps.sessionBusAddress,
      lookupWindow: async (id) => {
        const w = await findWindow(io.x11, id);
        return w ? { windowId: id, title: w.title, pid: w.pid, geometry: w.client } : null;
      },
    }).catch((err: unknown) => {
      pending = null;
      throw new AppError(
        'service_unavailable',
        `accessibility bus unavailable: ${(err as Error).message}`,
      );
    });
    return pending;
  };
  app.addHook('onClose', async () => {
    const d = await pending?.catch(() => null);
    d?.close();
  });

  guestRoute(app, GuestRoutes.observe, async (body) => {
    const capture = (windowId: number, maxDimension: number) =>
      captureScreenshot(io, { window_id: windowId, max_dimension: maxDimension, format: 'png' });
    let d: A11yDesktop;
    try {
      d = await desktop();
    } catch (err) {
      // "Cannot see" is an answer for observe (degraded), not an error: the window may exist.
      const w = await findWindow(io.x11, body.window_id);
      if (!w) throw new AppError('window_not_found', `no window ${body.window_id}`);
      // No bus, no snapshot store: nothing a diff could be against (a new one starts empty).
      if (body.since !== undefined)
        throw new AppError(
          'stale_snapshot',
          `Snapshot ${body.since} is unknown: the accessibility bus is unavailable; observe without since.`,
          { reason: 'unknown' },
        );
      return unobservable(body, w, (err as Error).message);
    }
    const res = await observeWindow(d, body, capture);
    if (!res) throw new AppError('window_not_found', `no window ${body.window_id}`);
    return res;
  });
  guestRoute(app, GuestRoutes['act.element'], async (body) => {
    const d = await desktop();
    // A secure target's text never reaches the recording, whatever the action's outcome.
    const found = d.snapshots.resolve(body.element_token);
    const secure = found.kind === 'ok' && isSecure(found.binding.fingerprint.role);
    const redact: ('value' | 'text')[] =
      secure && body.action === 'set_value'
        ? ['value']
        : secure && body.action === 'type_text'
          ? ['text']
          : [];
    return recordAction(
      io,
      { window_id: body.window_id, action: { kind: 'element', request: body }, redact },
      async () => {
        const res = await actOnElement(d, io.x11, body);
        // A token refused for a window that does not exist at all is the caller's wrong window.
        const isGone =
          !res || (res.effect === 'refused' && !(await findWindow(io.x11, body.window_id)));
        if (isGone) throw new AppError('window_not_found', `no window ${body.window_id}`);
        return res;
      },
    );
  });
  guestRoute(app, GuestRoutes.verify_state, async (body) => {
    const res = await verifyState(await desktop(), body);
    if (!res) throw new AppError('window_not_found', `no window ${body.window_id}`);
    return res;
  });
}

let unobservableCount = 0;

/** unobservable answers an observe when the accessibility bus cannot be reached at all. */
function unobservable(
  req: ObserveRequest,
  w: { title: string; pid: number | null; app: string | null },
  detail: string,
): ObserveResponse {
  unobservableCount += 1;
  return {
    // An id outside the store's sequence: it binds no tokens, so there is nothing to invalidate.
    snapshot_id: `su${unobservableCount.toString(36)}`,
    invalidated_snapshot_ids: [],
    window: { window_id: req.window_id, title: w.title, pid: w.pid, app: w.app },
    elements: [],
    truncated: false,
    degraded: { reasons: ['a11y_bus_unavailable'], detail: detail.slice(0, 1024) },
    duration_ms: 0,
  };
}
