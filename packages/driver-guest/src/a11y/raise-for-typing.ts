import type { ActionResult } from '@cubicle/contract/guest';
import { type ActionContext, refused } from '../actions/action-results.js';
import { activateWindow } from '../input/activate-window.js';
import { IFACE } from './atspi-constants.js';
import { call, type Target } from './element-target.js';

/**
 * Raised is the outcome of raiseForTyping: the foreground context to report (and whether the
 * window was already the active one), or the refusal.
 */
export type Raised =
  | { isRaised: true; ctx: ActionContext; wasActive: boolean }
  | { isRaised: false; refusal: ActionResult };

/**
 * focusForTyping gives the target the keyboard focus (GrabFocus) unless it has it already: its
 * window was the active one before raiseForTyping and its states, read live when the token was
 * resolved, say `focused`. The grab is a round trip to the app's main thread, the one that
 * then handles the keys (0.5-10 ms on a loaded machine, measured on Chromium).
 */
export async function focusForTyping(t: Target, raised: { wasActive: boolean }): Promise<void> {
  if (raised.wasActive && t.states.includes('focused')) return;
  await call(t, IFACE.component, 'GrabFocus');
}

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
  if (focus.isActive) return { isRaised: true, ctx: fg, wasActive: !focus.changed };
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
