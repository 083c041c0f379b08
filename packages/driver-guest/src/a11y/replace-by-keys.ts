import type { ActionResult } from '@cubicle/contract/guest';
import { type ActionContext, refused } from '../actions/action-results.js';
import { pressKeys } from '../input/press-keys.js';
import { typeText as typeKeys } from '../input/type-text.js';
import { keyGapMs } from './action-latency.js';
import { isSecure } from './atspi-constants.js';
import type { Target } from './element-target.js';
import { focusForTyping, raiseForTyping } from './raise-for-typing.js';
import { readBack, settleText } from './read-back.js';
import { readLength, readValue } from './read-values.js';

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
      'This field exposes no editable text, so its value can only be typed through the keyboard focus: send the same request with delivery_mode "foreground", or without one.',
      { target: 'foreground', reason: 'route_unavailable' },
    );
  const raised = await raiseForTyping(t, ctx);
  if (!raised.isRaised) return raised.refusal;
  const fg = raised.ctx;
  const secure = isSecure(t.node.role);
  const before = secure
    ? await readLength(t.desktop.bus, t.mirror.appBus, t.node)
    : await readValue(t.desktop.bus, t.mirror.appBus, t.node);
  await focusForTyping(t, raised);
  // Select all, then type over it: an empty value deletes the selection instead.
  const selected = await pressKeys(t.x11, 'ctrl+a', 1);
  if (selected.delivered === 0)
    return refused(fg, 'unsupported_text', `Nothing was sent: ${selected.error ?? 'no key'}`);
  const expected = secure ? [...value].length : value;
  // Waited for inside typeKeys, before its spare keycodes are restored (see typeText).
  let settled: string | number | undefined;
  const settle = async () => {
    settled = await settleText(t, expected);
  };
  const typed =
    value === ''
      ? await pressKeys(t.x11, 'BackSpace', 1)
      : await typeKeys(t.x11, value, settle, keyGapMs(t.mirror));
  if (typed.delivered === 0 && typed.error)
    return refused(fg, 'unsupported_text', `Nothing was typed: ${typed.error}`);
  if (value === '') await settle();
  return readBack(
    t,
    fg,
    secure,
    before,
    value,
    'Selected the text and typed the value with XTest',
    settled,
  );
}
