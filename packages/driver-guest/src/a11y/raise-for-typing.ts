import type { ActionResult } from '@cubicle/contract/guest';
import { type ActionContext, refused } from '../actions/action-results.js';
import { activateWindow } from '../input/activate-window.js';
import type { Target } from './element-target.js';

/** Raised is the outcome of raiseForTyping: the foreground context to report, or the refusal. */
export type Raised =
  { isRaised: true; ctx: ActionContext } | { isRaised: false; refusal: ActionResult };

/**
 * raiseForTyping starts every foreground key delivery (typed text, a replaced value, keys into a
 * focusable element): XTest keys go to the active window, so the target's window is brought to
 * the front first, and the result reports the xtest route with the focus changed. When the
 * window manager does not raise it, nothing may be typed: the keys would land in another window,
 * so the action is refused for a human to look at.
 */
export async function raiseForTyping(t: Target, ctx: ActionContext): Promise<Raised> {
  const fg: ActionContext = {
    ...ctx,
    route: 'xtest',
    delivery: { mode: 'foreground', focus_changed: true },
  };
  const focus = await activateWindow(t.x11, t.windowId);
  if (focus.isActive) return { isRaised: true, ctx: fg };
  return {
    isRaised: false,
    refusal: refused(
      fg,
      'element_offscreen',
      'The window manager did not bring the window to the front; nothing was typed.',
      { target: 'human', reason: 'route_unavailable' },
    ),
  };
}
