import type { ActionResult } from '@cubicle/contract/guest';
import { type ActionContext, refused } from '../actions/action-results.js';
import { activateWindow } from '../input/activate-window.js';
import { pressKeys } from '../input/press-keys.js';
import { typeText as typeKeys } from '../input/type-text.js';
import { IFACE, isSecure } from './atspi-constants.js';
import { readLength, readValue } from './read-values.js';
import { call, readBack, type Target } from './element-actions.js';

/** How long typed keys may take to reach the field: the toolkit drains its queue after XTest. */
const SETTLE_MS = 3_000;

/**
 * replaceByKeys sets the text of a field that has Text but no EditableText: Chromium's web
 * inputs and textareas (measured on Chromium 156: `entry` rows with Text and the `editable`
 * state, no EditableText, so SetTextContents does not exist). The only way in is the keyboard
 * focus, so this is foreground input through the one XTest path (src/input/): raise the window,
 * focus the field, select all, type the value over it, and read the text back. Only the read-back
 * confirms it; a page that filters or reformats input is reported `unverifiable` with both texts.
 */
export async function replaceByKeys(
  t: Target,
  ctx: ActionContext,
  value: string,
  mode: 'background' | 'foreground',
): Promise<ActionResult> {
  if (mode === 'background')
    return refused(
      ctx,
      'action_not_supported',
      'This field exposes no editable text, so its value can only be typed through the keyboard focus: send the same request with delivery_mode "foreground".',
      { target: 'foreground', reason: 'route_unavailable' },
    );
  const fg: ActionContext = {
    ...ctx,
    route: 'xtest',
    delivery: { mode: 'foreground', focus_changed: true },
  };
  const focus = await activateWindow(t.x11, t.windowId);
  if (!focus.isActive)
    return refused(
      fg,
      'element_offscreen',
      'The window manager did not bring the window to the front; nothing was typed.',
      { target: 'human', reason: 'route_unavailable' },
    );
  const secure = isSecure(t.node.role);
  const read = () =>
    secure
      ? readLength(t.desktop.bus, t.mirror.appBus, t.node)
      : readValue(t.desktop.bus, t.mirror.appBus, t.node);
  const before = await read();
  await call(t, IFACE.component, 'GrabFocus');
  // Select all, then type over it: an empty value deletes the selection instead.
  const selected = await pressKeys(t.x11, 'ctrl+a', 1);
  if (selected.delivered === 0)
    return refused(fg, 'unsupported_text', `Nothing was sent: ${selected.error ?? 'no key'}`);
  const expected = secure ? [...value].length : value;
  // Waited for inside typeKeys, before its spare keycodes are restored (see typeText).
  const settle = async () => {
    const deadline = performance.now() + SETTLE_MS;
    while (performance.now() < deadline) {
      await t.mirror.fence().catch(() => undefined);
      if ((await read()) === expected) return;
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  const typed =
    value === '' ? await pressKeys(t.x11, 'BackSpace', 1) : await typeKeys(t.x11, value, settle);
  if (typed.delivered === 0 && typed.error)
    return refused(fg, 'unsupported_text', `Nothing was typed: ${typed.error}`);
  if (value === '') await settle();
  return readBack(t, fg, secure, before, value, 'Selected the text and typed the value with XTest');
}
