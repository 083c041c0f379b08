import type { ActionResult, PixelActionRequest, Point } from '@cubicle/contract/guest';
import { AppError } from '@cubicle/contract/errors';
import type { DesktopIo } from '../server/desktop-io.js';
import { clipToScreen } from '../screen/grab-screen.js';
import { toScreen, type ScreenshotMapping } from '../screen/screenshot-registry.js';
import { findWindow } from '../windows/list-windows.js';
import { judged, partial, refused } from '../actions/action-results.js';
import { activateWindow, isPointOnWindow } from './activate-window.js';
import { snapshotWindow, waitForChange } from './watch-window.js';
import { typeText } from './type-text.js';
import { parseCombo, pressKeys } from './press-keys.js';
import { XTestPointer } from './xtest-input.js';

const BUTTONS = { left: 1, middle: 2, right: 3, back: 8, forward: 9 } as const;

/** scrollButtons maps wheel notches to X buttons 4/5 (up/down) and 6/7 (left/right). */
function scrollButtons(dx: number, dy: number): { button: number; count: number }[] {
  const out = [];
  if (dy !== 0) out.push({ button: dy > 0 ? 5 : 4, count: Math.abs(dy) });
  if (dx !== 0) out.push({ button: dx > 0 ? 7 : 6, count: Math.abs(dx) });
  return out;
}

/** pointsOf lists the screenshot pixels a request names, in the order they are used. */
function pointsOf(req: PixelActionRequest): { x: number; y: number }[] {
  switch (req.action) {
    case 'click':
    case 'double_click':
    case 'right_click':
    case 'move':
    case 'mouse_down':
    case 'mouse_up':
    case 'scroll':
      return [{ x: req.x, y: req.y }];
    case 'drag':
      return [
        { x: req.x, y: req.y },
        { x: req.to_x, y: req.to_y },
      ];
    case 'type':
    case 'key':
      return req.focus_at ? [req.focus_at] : [];
    default:
      return req satisfies never;
  }
}

/**
 * performPixelAction delivers input at screenshot pixels. It refuses (nothing delivered) unless
 * the screenshot is the window's latest and the window has not moved since, every point lies in
 * the image, and the caller allowed the foreground: XTest moves the real pointer and focus, which
 * background mode promises not to do. Delivered input is `confirmed` only by a visible change.
 * Without `window_id` the screenshot is the display's latest: no window is raised and the input
 * lands on whatever is at the point, as on a person's screen; the change is looked for anywhere.
 */
export async function performPixelAction(
  io: DesktopIo,
  req: PixelActionRequest,
): Promise<ActionResult> {
  const started = performance.now();
  const windowId = req.window_id ?? null;
  const win = windowId === null ? null : await findWindow(io.x11, windowId);
  if (windowId !== null && !win) throw new AppError('window_not_found', `no window ${windowId}`);
  const c = { route: 'xtest' as const, started, screenshotId: req.screenshot_id };
  const what = windowId === null ? 'the display' : 'this window';
  const check = io.screenshots.check(windowId, req.screenshot_id);
  if (!check.ok)
    return refused(
      c,
      'stale_screenshot',
      check.latest
        ? `The latest screenshot of ${what} is ${check.latest}; look at it (or a new one) and use its pixels.`
        : `Take a screenshot of ${what} first; pixel input is measured in its pixels.`,
    );
  const x = await io.x11.conn();
  const display = { x: 0, y: 0, w: x.setup.width, h: x.setup.height };
  const rect = !win ? display : win.minimized ? null : clipToScreen(win.client, x.setup);
  if (!rect || !sameOrigin(check.mapping, rect))
    return refused(
      c,
      'stale_screenshot',
      'The window moved, resized or was minimized since this screenshot; take a new one.',
    );
  const screen: Point[] = [];
  for (const p of pointsOf(req)) {
    const s = toScreen(check.mapping, p);
    if (!s)
      return refused(
        c,
        'point_out_of_bounds',
        `(${p.x}, ${p.y}) is outside the ${check.mapping.width}x${check.mapping.height} screenshot.`,
      );
    screen.push(s);
  }
  // An unknown key name is refused before the window is activated: nothing at all is sent.
  if (req.action === 'key' && !parseCombo(req.keys))
    return refused(c, 'unsupported_text', unknownKeyHint(req.keys));
  if (req.delivery_mode !== 'foreground')
    return refused(
      c,
      'foreground_required',
      'Pixel input goes through XTest, which moves the real pointer and focus; resend with delivery_mode "foreground", or act on an element token for background delivery.',
      { target: 'foreground', reason: 'route_unavailable' },
    );

  // The display has no window to raise: its input goes where the pointer lands.
  const focus =
    windowId === null ? { changed: false, isActive: true } : await activateWindow(io.x11, windowId);
  // Input that would land on another window is refused before any of it is sent.
  if (!focus.isActive)
    return refused(
      c,
      'element_offscreen',
      'The window manager did not bring the window to the front; nothing was typed or clicked.',
      { target: 'human', reason: 'route_unavailable' },
    );
  for (const p of windowId === null ? [] : screen)
    if (!(await isPointOnWindow(io.x11, windowId!, p)))
      return refused(
        c,
        'element_offscreen',
        `Another window covers screen point (${p.x}, ${p.y}); close or move it, then take a new screenshot.`,
        { target: 'observe', reason: 'target_stale' },
      );
  const before = await snapshotWindow(io.x11, windowId);
  const delivery = {
    mode: 'foreground' as const,
    focus_changed: focus.changed,
    pointer_moved: screen.length > 0,
  };
  const pointer = new XTestPointer(io.x11);
  let requested: number | undefined;
  let deliveredCount: number | undefined;
  switch (req.action) {
    case 'click':
    case 'double_click':
    case 'right_click': {
      const count =
        req.action === 'click' ? (req.count ?? 1) : req.action === 'double_click' ? 2 : 1;
      const button =
        req.action === 'click'
          ? BUTTONS[req.button ?? 'left']
          : req.action === 'right_click'
            ? 3
            : 1;
      await pointer.click(screen[0]!, button, count, req.modifiers);
      requested = count;
      deliveredCount = count;
      break;
    }
    case 'mouse_down':
    case 'mouse_up':
      await pointer.button(screen[0]!, BUTTONS[req.button ?? 'left'], req.action === 'mouse_down');
      break;
    case 'move':
      await pointer.move(screen[0]!);
      break;
    case 'drag':
      await pointer.drag(screen[0]!, screen[1]!, BUTTONS[req.button]);
      break;
    case 'scroll':
      for (const s of scrollButtons(req.dx, req.dy))
        await pointer.click(screen[0]!, s.button, s.count, req.modifiers);
      break;
    case 'type': {
      if (screen[0]) await focusClick(pointer, screen[0]);
      const typed = await typeText(io.x11, req.text);
      requested = typed.requested;
      deliveredCount = typed.delivered;
      if (typed.delivered > 0 && typed.delivered < typed.requested)
        return partial(
          c,
          { ...delivery, requested_count: typed.requested, delivered_count: typed.delivered },
          'Typing stopped midway; observe the field and type only the rest.',
        );
      break;
    }
    case 'key': {
      if (screen[0]) await focusClick(pointer, screen[0]);
      const pressed = await pressKeys(io.x11, req.keys, req.repeat, req.hold_ms ?? 0);
      if (pressed.unknownKey) return refused(c, 'unsupported_text', unknownKeyHint(req.keys));
      requested = req.repeat;
      deliveredCount = pressed.delivered;
      break;
    }
    default:
      return req satisfies never;
  }
  const evidence = before ? await waitForChange(io.x11, before) : [];
  return judged(
    {
      ...c,
      delivery: {
        ...delivery,
        ...(requested !== undefined ? { requested_count: requested } : {}),
        ...(deliveredCount !== undefined ? { delivered_count: deliveredCount } : {}),
      },
    },
    { evidence },
  );
}

const unknownKeyHint = (keys: string) =>
  `"${keys}" names a key the guest does not know; use a keysym name such as Return, ctrl+s, F5, plus.`;

/**
 * focusClick clicks where typing should go and gives the app a moment to move focus: GTK lost
 * the first typed character when keys followed the click within a few milliseconds.
 */
async function focusClick(pointer: XTestPointer, at: Point): Promise<void> {
  await pointer.click(at, 1, 1);
  await new Promise((r) => setTimeout(r, 80));
}

function sameOrigin(
  m: ScreenshotMapping,
  rect: { x: number; y: number; w: number; h: number },
): boolean {
  return (
    m.origin.x === rect.x &&
    m.origin.y === rect.y &&
    Math.round(rect.w * m.scale) === m.width &&
    Math.round(rect.h * m.scale) === m.height
  );
}
