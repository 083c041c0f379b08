import type { ActionResult, RecordedAction, WindowId } from '@cubicle/contract/guest';
import type { DesktopIo } from '../server/desktop-io.js';
import { encodePng } from '../screen/encode-png.js';
import { clipToScreen, grabScreen } from '../screen/grab-screen.js';
import { downscale, fitScale } from '../screen/scale-image.js';
import { findWindow } from '../windows/list-windows.js';

const SETTLE_POLL_MS = 40;
const SETTLE_MAX_MS = 500;

/**
 * windowPng is a frame for the trajectory; it is not a ScreenshotId, so pixel input is
 * unaffected. An `after` frame waits until two grabs in a row agree (up to half a second): apps
 * repaint a few frames after the input that caused it, and a frame caught mid-repaint would
 * show the state before the action.
 */
async function windowPng(
  io: DesktopIo,
  windowId: WindowId,
  settle: boolean,
): Promise<Buffer | null> {
  try {
    const win = await findWindow(io.x11, windowId);
    const x = await io.x11.conn();
    const rect = win && !win.minimized ? clipToScreen(win.client, x.setup) : null;
    if (!rect) return null;
    let grab = await grabScreen(io.x11, rect);
    const deadline = performance.now() + SETTLE_MAX_MS;
    while (settle && performance.now() < deadline) {
      await new Promise((r) => setTimeout(r, SETTLE_POLL_MS));
      const next = await grabScreen(io.x11, rect);
      const isStable = next.data.equals(grab.data);
      grab = next;
      if (isStable) break;
    }
    const img = downscale(grab, fitScale(rect.w, rect.h, 1568));
    return encodePng(img.data, img.width, img.height);
  } catch {
    return null;
  }
}

/**
 * redactAction empties the text or value of a request aimed at a secure field, so the secret
 * never reaches disk; `redacted` lists what was emptied.
 */
export function redactAction(
  action: RecordedAction,
  fields: readonly ('value' | 'text')[],
): RecordedAction {
  const request: Record<string, unknown> = { ...action.request };
  for (const f of fields) if (f in request) request[f] = '';
  return { ...action, request } as RecordedAction;
}

/**
 * redactResult drops window titles from the evidence of a redacted action: apps echo typed text
 * into titles (editors show the document's first line), so a title can carry the secret.
 */
export function redactResult(result: ActionResult): ActionResult {
  if (result.effect === 'refused' || !result.evidence) return result;
  const evidence = result.evidence.map((e) => {
    if (e.kind !== 'window_change') return e;
    const { title: _title, ...rest } = e;
    return rest;
  });
  return { ...result, evidence } as ActionResult;
}

/**
 * recordAction runs an action and, while a recording is active, appends it with before and
 * after frames of the window and its ActionResult. `redact` names the fields that must not be
 * stored (a secure target's text). Errors (404s) propagate unrecorded: nothing happened.
 * Recording failures never fail the action.
 */
export async function recordAction(
  io: DesktopIo,
  input: { window_id: WindowId; action: RecordedAction; redact?: readonly ('value' | 'text')[] },
  run: () => Promise<ActionResult>,
): Promise<ActionResult> {
  if (!io.recorder.isActive) return run();
  const frames = io.recorder.wantsScreenshots;
  const before = frames ? await windowPng(io, input.window_id, false) : null;
  const result = await run();
  const after = frames ? await windowPng(io, input.window_id, true) : null;
  const redact = input.redact ?? [];
  await io.recorder
    .append({
      at: new Date().toISOString(),
      window_id: input.window_id,
      action: redact.length > 0 ? redactAction(input.action, redact) : input.action,
      ...(redact.length > 0 ? { redacted: [...redact] as ['value' | 'text'] } : {}),
      before,
      after,
      result: redact.length > 0 ? redactResult(result) : result,
    })
    .catch(() => undefined);
  return result;
}
